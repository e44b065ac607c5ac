public import SharedSession

/// Why a measurement of rendered audio was refused: it would have measured nothing (or less than was
/// asked), and a check on nothing passes — a silence check on a stem that went missing, a click check
/// on a range past the end. ``LevelMeter``'s methods and `RenderedAudio.stem(_:)`
/// throw it; under Swift Testing or XCTest a thrown error fails the test with this description.
public struct MeasurementError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The audio holds no frame.
        case noAudio
        /// The frames asked for are empty or reach outside the audio.
        case rangeOutsideAudio
        /// The render has no stem for the stream asked for (it was never opened, or closed before).
        case missingStem
        /// The stem does not hold as many frames as the render.
        case wrongLength
    }

    /// What was wrong.
    public let code: Code
    /// What was measured, what was found, and how to fix it.
    public let message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension RenderedAudio {
    /// The stem of the stream `id`, required to be there and to hold every frame rendered (as many
    /// samples as the mix): what a test measures instead of `stems[id] ?? []`, which would measure
    /// nothing, silently, if the stream were missing.
    ///
    /// - Throws: ``MeasurementError`` with ``MeasurementError/Code/missingStem`` when the render has no
    ///   stem for `id`, ``MeasurementError/Code/wrongLength`` when it is shorter or longer than the mix,
    ///   ``MeasurementError/Code/noAudio`` when nothing was rendered.
    public func stem(_ id: StreamID) throws(MeasurementError) -> [Float] {
        guard frames > 0, !mix.isEmpty else {
            throw MeasurementError(
                code: .noAudio, message: "the render holds no frame; render a positive duration before measuring")
        }
        guard let stem = stems[id] else {
            let open = stems.keys.map { "\($0)" }.sorted().joined(separator: ", ")
            throw MeasurementError(
                code: .missingStem,
                message: "no stem for stream \(id) in a render of \(frames) frames (stems: \(open)); "
                    + "was the stream opened on this engine, and is it still open?")
        }
        guard stem.count == mix.count else {
            throw MeasurementError(
                code: .wrongLength,
                message: "the stem of stream \(id) holds \(stem.count) samples, the mix of \(frames) frames "
                    + "\(mix.count)")
        }
        return stem
    }

    /// The stem of the stream `handle` opened, required: the stem of `handle.id`, which must be there
    /// and hold every frame rendered.
    public func stem(_ handle: StreamHandle) throws(MeasurementError) -> [Float] {
        try stem(handle.id)
    }
}
