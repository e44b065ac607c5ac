internal import CLatencySink
public import SharedSession

/// A PipeWire sink with a known latency it declares: what is played into it comes out of another
/// sink (`target`) exactly ``delay`` later, and it declares that delay on its port as Bluetooth
/// headphones declare their codec and transport delay. A stream playing into it sees the delay in the
/// route's latency (`StreamHandle.outputLatency` grows by it), so a player can check its lip sync
/// (`MediaFileSource.clock(at:)`, the clock at the ear) without headphones, and a test can record the
/// target's monitor to hear where each frame really lands.
///
/// ```swift
/// let headphones = try DeclaredLatencySink(
///     name: "pretend-headphones", target: "alsa_output.pci", delay: .milliseconds(200))
/// // move the movie's stream to "pretend-headphones" (a mixer, `target.object`), or open it there:
/// let movie = try session.openMainStream(
///     StreamDescriptor(name: "movie", role: .movie, target: headphones.name), source: source)
/// ```
///
/// It keeps a connection and a thread of its own, built as PipeWire's `module-loopback` is: an
/// `Audio/Sink` stream whose process callback passes its quantum through a ring of exactly ``delay``
/// into a stream to `target`, in the same graph cycle. The declared latency is what the target
/// declares plus ``delay``, and at least one quantum for the device, which PipeWire's null sink
/// plays late without declaring it. It goes when ``close()`` is called or it is released.
public final class DeclaredLatencySink: Sendable {
    /// The sink's `node.name`: what a stream's `target.object` names to play through it.
    public let name: String
    /// The sink its audio comes out of.
    public let target: String
    /// How much later its audio comes out of `target`, in 48 kHz frames.
    public let delayFrames: Int
    /// The same, as a duration.
    public var delay: Duration { AudioFormat.standard.duration(ofFrames: delayFrames) }

    /// The C sink's address; 0 once closed. Behind the package's lock so a count read never races the
    /// close.
    private let handle: Locked<UInt>

    /// The longest delay taken: more than any real route (a network sink, about 2 s).
    public static let maximumDelay = Duration.seconds(2)

    /// Makes the sink `name`, whose audio comes out of the sink named `target` `delay` later, rounded
    /// to a 48 kHz frame.
    ///
    /// - Throws: `SessionError` with code `invalidValue` for a delay below zero or above
    ///   ``maximumDelay`` or an empty name, and `engineUnavailable` naming what failed when the daemon
    ///   cannot be reached or the streams cannot be made.
    public init(name: String, target: String, delay: Duration) throws(SessionError) {
        guard !name.isEmpty, !target.isEmpty else {
            throw SessionError(
                code: .invalidValue,
                message: "a latency sink needs a name and a target sink: give both, such as "
                    + "\"pretend-headphones\" and the default sink's node.name")
        }
        guard delay >= .zero, delay <= Self.maximumDelay else {
            throw .invalidValue(
                "latency sink delay", delay.inSeconds, fix: "give a delay from 0 through \(Self.maximumDelay)")
        }
        let frames = AudioFormat.standard.frames(in: delay)
        var message = [CChar](repeating: 0, count: 256)
        guard let sink = CLatencySink_create(name, target, UInt32(frames), &message, message.count) else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw SessionError(
                code: .engineUnavailable,
                message: "the latency sink \(name) could not be made: \(why); start the PipeWire daemon "
                    + "(`systemctl --user start pipewire wireplumber`), and check that a sink named \(target) exists")
        }
        self.name = name
        self.target = target
        self.delayFrames = frames
        handle = Locked(UInt(bitPattern: sink))
    }

    deinit {
        close()
    }

    /// Graph cycles the sink has passed audio through (it runs once anything plays into it).
    public var cycles: Int {
        handle.withLock { bits in
            guard let sink = OpaquePointer(bitPattern: bits) else { return 0 }
            return Int(CLatencySink_cycles(sink))
        }
    }

    /// Removes the sink: streams playing into it go back to where the session manager puts them.
    /// Closing twice does nothing.
    public func close() {
        handle.withLock { bits in
            guard let sink = OpaquePointer(bitPattern: bits) else { return }
            bits = 0
            CLatencySink_destroy(sink)
        }
    }
}
