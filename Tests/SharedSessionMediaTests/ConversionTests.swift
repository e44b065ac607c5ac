import Foundation
import SharedSession
import SharedSessionMedia
import Testing

/// Whatever the file's rate and channel layout, the source plays 48 kHz stereo: the tone keeps its
/// pitch, its level and its length; channels go where a listener expects them.
@Suite("Conversion to 48 kHz stereo")
struct ConversionTests {
    @Test("any sample rate: pitch, level and length kept", arguments: [8000, 22_050, 32_000, 44_100, 96_000])
    func sampleRates(_ rate: Int) throws {
        let path = try MediaFiles.tone(
            "rate-\(rate).wav", frequency: 1000, seconds: 1.5, rate: rate, layout: "mono", codec: ["-c:a", "pcm_f32le"])
        let source = try MediaFileSource(path: path, startsPlaying: true)
        #expect(source.info.sampleRate == rate)
        let rendered = Listen.renderAll(source)
        let heard = AudioFormat.standard.frames(in: source.clock)
        let left = Listen.channel(rendered, 0)
        let right = Listen.channel(rendered, 1)
        let level = Listen.level(left[4800..<67_200])
        let frequency = Listen.frequency(left[4800..<67_200])
        print("\(rate) Hz mono: \(heard) frames, \(level) dBFS, \(frequency) Hz")
        // Measured: every rate heard to the frame, 0.0016–0.0022 dB under the tone's level (lavfi's
        // sine, the same in the file), within 0.00002 Hz (MediaMeasurements.md).
        #expect(heard == 72_000)
        #expect(abs(level - sineLevel) < 0.003)
        #expect(abs(frequency - 1000) < 0.001)
        // Mono plays at its own level on both sides.
        #expect(left == right)
    }

    struct Layout: Sendable, CustomTestStringConvertible {
        let name: String
        /// pan filter output: the tone on one channel of the layout.
        let pan: String
        let left: Double?
        let right: Double?
        var testDescription: String { name }
    }

    /// lavfi's sine at −3 dB: libswresample's centre and surround mix level.
    static let minus3 = sineLevel + 20 * log10(0.5.squareRoot())

    static let layouts: [Layout] = [
        Layout(name: "5.1 front left", pan: "5.1|FL=c0", left: sineLevel, right: nil),
        Layout(name: "5.1 front right", pan: "5.1|FR=c0", left: nil, right: sineLevel),
        Layout(name: "5.1 centre", pan: "5.1|FC=c0", left: minus3, right: minus3),
        Layout(name: "5.1 back left", pan: "5.1|BL=c0", left: minus3, right: nil),
        Layout(name: "5.1 LFE (left out)", pan: "5.1|LFE=c0", left: nil, right: nil),
        Layout(name: "stereo right only", pan: "stereo|c1=c0", left: nil, right: sineLevel),
    ]

    @Test("channel layouts downmix where a listener expects", arguments: layouts)
    func layoutsDownmix(_ layout: Layout) throws {
        let name = "layout-\(layout.name.filter { $0.isLetter || $0.isNumber }).flac"
        let path = try MediaFiles.make(
            name,
            ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=1,pan=\(layout.pan)", "-c:a", "flac"])
        let source = try MediaFileSource(path: path, startsPlaying: true)
        let rendered = Listen.renderAll(source)
        for (side, expected) in [(0, layout.left), (1, layout.right)] {
            let level = Listen.level(Listen.channel(rendered, side)[4800..<43_200])
            print("\(layout.name) (\(source.info.channelLayout)): channel \(side) at \(level) dBFS")
            if let expected {
                #expect(abs(level - expected) < 0.1)
            } else {
                #expect(level < -100)
            }
        }
    }

    @Test("left and right keep their own content")
    func stereoKeepsSides() throws {
        let path = try MediaFiles.make(
            "sides.ogg",
            [
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=1", "-f", "lavfi", "-i",
                "sine=frequency=880:sample_rate=44100:duration=1", "-filter_complex", "[0][1]amerge=inputs=2",
                "-c:a", "libvorbis",
            ])
        let source = try MediaFileSource(path: path, startsPlaying: true)
        let rendered = Listen.renderAll(source)
        #expect(abs(Listen.frequency(Listen.channel(rendered, 0)[4800..<43_200]) - 440) < 0.05)
        #expect(abs(Listen.frequency(Listen.channel(rendered, 1)[4800..<43_200]) - 880) < 0.05)
    }
}
