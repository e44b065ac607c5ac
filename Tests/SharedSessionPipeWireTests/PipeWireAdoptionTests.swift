import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

extension DaemonTests {
    /// Foreign players in the session: GStreamer, pw-play and mpv in processes of their own, adopted by
    /// rules; levels read from the sink's monitor.
    @Suite("PipeWire node adoption")
    struct AdoptionTests {
        /// The largest step, in dB, the adopted main's level may take between two 256-frame windows
        /// of the monitor during a duck or a restore with the default policy (20 dB over 150 ms and
        /// 400 ms, quantum 1024: the schedule's steps are 2.9 dB and 1.1 dB). A single step of the
        /// same change (`pw-cli set-param`) is the whole 20 dB.
        static let largestStepAllowed = 3.5

        @Test(
            "a GStreamer main is ducked under an adopted pw-play overlay, takes the host's volume during the duck and comes back to it within 0.5 dB"
        )
        func gstreamerMainUnderPwPlay() async throws {
            let rig = try AdoptionRig()
            defer { rig.stop() }
            let gst = try rig.startGStreamer()
            let main = try rig.adoption.adoptMain(AdoptionRule(.processID(gst.pid, includingChildren: false)))
            defer { main.close() }
            try await rig.wait("main adopted") { if case .adopted = $0 { true } else { false } }
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            let before = rig.rig.mainLevel()

            let clip = try toneFile(overlayTone, amplitude: 0.25, seconds: 1.5)
            let overlay = try rig.adoption.adoptOverlay(AdoptionRule(.applicationName("pw-play")), unit: "feed")
            defer { overlay.close() }
            _ = try rig.startPwPlay(clip)
            let adopted = try await rig.wait("overlay adopted") {
                if case .adopted(let stream, _, _, _) = $0 { stream == overlay.id } else { false }
            }
            try await rig.wait("overlay playing") { $0 == .playing(stream: overlay.id, true) }
            try await rig.recorder.record(for: .milliseconds(400))
            let ducked = rig.rig.mainLevel()

            rig.session.mainVolume = 0.5
            try await rig.recorder.record(for: .milliseconds(400))
            let duckedAtHalf = rig.rig.mainLevel()

            try await rig.wait("overlay stopped", timeout: .seconds(5)) { $0 == .playing(stream: overlay.id, false) }
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = rig.rig.mainLevel()

            print(
                "[adoption] GStreamer main: before \(before), ducked \(ducked), ducked at volume 0.5 \(duckedAtHalf), "
                    + "restored \(restored) dBFS; overlay \(adopted)")
            #expect(abs(before - mainLevel) < 0.5)
            #expect(abs(ducked - (mainLevel - 20)) < 0.5)
            #expect(abs(duckedAtHalf - (mainLevel - 20 - 6.02)) < 0.5)
            #expect(abs(restored - (mainLevel - 6.02)) < 0.5)
        }

        /// The largest step heard during a 20 dB duck (150 ms) and its restore (400 ms) of a steady
        /// GStreamer main, against the same change as one `pw-cli set-param` step and against the
        /// in-process ramp of one of our own streams.
        @Test("an adopted main ramps in steps no larger than the schedule's; a single step is the whole change")
        func stepSchedule() async throws {
            let rig = try AdoptionRig()
            defer { rig.stop() }
            let gst = try rig.startGStreamer()
            let main = try rig.adoption.adoptMain(AdoptionRule(.processID(gst.pid, includingChildren: false)))
            defer { main.close() }
            let adopted = try await rig.wait("main adopted") { if case .adopted = $0 { true } else { false } }
            guard case .adopted(_, let node, _, _) = adopted else { return }
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))

            let duckStart = rig.recorder.mark()
            let duck = rig.session.duck(owner: "feed")
            try await rig.recorder.record(for: .milliseconds(400))
            let ducked = rig.rig.mainLevel()
            let duckEnd = rig.recorder.mark()
            duck.release()
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = rig.rig.mainLevel()
            let restoreEnd = rig.recorder.mark()
            let duckStep = rig.largestStep(mainTone, in: duckStart..<duckEnd)
            let restoreStep = rig.largestStep(mainTone, in: duckEnd..<restoreEnd)

            // The same change as one step, from outside (the engine takes it as the user's volume:
            // close the adoption first so nothing answers it).
            main.close()
            try await rig.recorder.record(for: .milliseconds(300))
            let singleStart = rig.recorder.mark()
            Daemon.run("pw-cli", ["set-param", "\(node)", "Props", "{ channelVolumes: [ 0.1, 0.1 ] }"])
            try await rig.recorder.record(for: .milliseconds(400))
            let singleStep = rig.largestStep(mainTone, in: singleStart..<rig.recorder.mark())

            print(
                "[measure] adopted GStreamer main, largest step per 256 frames: duck 20 dB/150 ms \(duckStep) dB, "
                    + "restore 400 ms \(restoreStep) dB; one pw-cli set-param step \(singleStep) dB "
                    + "(ducked \(ducked), restored \(restored) dBFS)")
            #expect(abs(ducked - (mainLevel - 20)) < 0.5)
            #expect(abs(restored - mainLevel) < 0.5)
            #expect(duckStep < Self.largestStepAllowed)
            #expect(restoreStep < Self.largestStepAllowed)
            #expect(singleStep > 15)
        }
    }
}
