import CRealtimeProbe
import Foundation
import SharedSession
import SharedSessionMedia
@_spi(Testing) import SharedSessionPipeWire
import Testing

extension DaemonTests {
    /// A movie's soundtrack decoded by SharedSessionMedia, played by PipeWire on its real-time thread.
    @Suite("Media on PipeWire")
    struct MediaPlaybackTests {
        /// A 1 kHz sine at amplitude 0.5 (−6.02 dBFS), 44.1 kHz stereo AAC in MP4: resampled on the way.
        static func movie() throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "sharedsession-pw-movie-\(getpid()).mp4"
            ).path
            if FileManager.default.fileExists(atPath: path) { return path }
            let made = Daemon.run(
                "ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    "aevalsrc=0.5*sin(2*PI*1000*t)|0.5*sin(2*PI*1000*t):s=44100:d=12", "-c:a", "aac", "-b:a", "192k",
                    path,
                ])
            try #require(made.status == 0, "ffmpeg (Scripts/install media) could not make the movie: \(made.output)")
            return path
        }

        @Test("daemon: a decoded movie plays at its level; its clock follows; the data thread stays clean")
        func moviePlays() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            let movie = try MediaFileSource(path: try Self.movie(), startsPlaying: true)
            let control = try rig.engine.openStream(
                mainID, descriptor: StreamDescriptor(name: "movie", role: .movie), source: movie, gain: 1,
                paused: false)
            let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)

            let thread = try #require(rig.engine.dataThreadID)
            CRealtimeProbe_watchThread(pthread_t(thread))
            CRealtimeProbe_resetWatched()
            let cycles = rig.engine.processCycles
            let clockBefore = movie.clock
            let wallBefore = ContinuousClock.now
            try await rig.recorder.record(for: .milliseconds(1000))
            let clockAdvance = movie.clock - clockBefore
            let wall = ContinuousClock.now - wallBefore
            try movie.seek(to: .seconds(10))  // the control side, while the data thread renders
            try await rig.recorder.record(for: .milliseconds(500))
            let counts = CRealtimeProbe_readWatched()
            let inCallbacks = CRealtimeProbe_readWatchedInCallbacks()
            let culprit = String(cString: CRealtimeProbe_lastWatchedCall())
            CRealtimeProbe_unwatch()
            let counted = rig.engine.processCycles - cycles

            let samples = rig.recorder.samples
            let level = try meter.toneLevel(samples, frequency: mainTone, frames: window(start + 480, 9600))
            print(
                "[measure] movie on PipeWire: \(level) dBFS; clock +\(clockAdvance) over \(wall) of wall time; "
                    + "\(movie.underrunCount) underruns; data thread over \(counted) callbacks "
                    + "(\(inCallbacks.callbacks) buffers): \(counts.allocations) allocations, \(counts.frees) frees, "
                    + "\(counts.locks) locks; inside the callbacks \(inCallbacks.syscalls) system calls")
            #expect(abs(level - mainLevel) < 0.1, "measured: 0.0053 dB off (three runs)")
            // The clock runs at the sound server's pace: within a quantum or two of the wall clock.
            #expect(abs((clockAdvance - wall) / .milliseconds(1)) < 60)
            #expect(movie.clock >= .seconds(10))
            #expect(movie.underrunCount == 0)
            #expect(counted > 40)
            #expect(counts.allocations == 0)
            #expect(counts.frees == 0)
            #expect(counts.locks == 0)
            // PipeWire's own loop around the callbacks waits and signals with system calls; the
            // callbacks (the source's render side among them) make none.
            #expect(inCallbacks.syscalls == 0, "last counted call: \(culprit)")
            #expect(inCallbacks.callbacks >= Int64(counted))

            // The engine pausing the stream stops the clock.
            control.setPaused(true)
            try await rig.recorder.record(for: .milliseconds(200))
            let paused = movie.clock
            try await rig.recorder.record(for: .milliseconds(300))
            #expect(movie.clock == paused)
        }
    }
}
