import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

extension DaemonTests {
    /// A host that adopted another player's node and ducked it, ending in every way a real host ends
    /// (issues 23 and 32), on the private daemon with WirePlumber's stock stream restore: the
    /// `adopting-host` helper adopts a `pw-play` or an mpv playing a 1 kHz tone at -6 dBFS (and plays a
    /// stream of its own, role Movie), ducks both 20 dB, and ends (``HostEnding``). The user's volume is
    /// set on the player before the host starts, 0.5 in odd runs and 1 in even ones with pw-play
    /// (``endingUserVolume(run:player:)``), and found in WirePlumber's saved state. Each run asserts, for
    /// the player (see
    /// ``run(_:_:user:userChangesTo:)``):
    /// - its tone is heard back at the user's volume within 0.5 dB at the sink's monitor, within
    ///   ``restoreBound(quantum:throughLoopback:)`` of the ending (the kill, the command that ends the host);
    /// - its node's `softVolumes` equal its `channelVolumes` again, which are the user's, and its
    ///   `volume` is 1 (read with `pw-dump`);
    /// - the watchdog exits; when the host shuts down itself, the watchdog gave nothing back (the host's
    ///   own give-back held), and when the host died ducked, it gave the node back;
    /// - a player with the same application name and role, started afterwards with no host, starts at
    ///   the user's volume and is heard at that level;
    /// - WirePlumber's saved state holds the user's volume for the player's key, and no other volume for
    ///   its role or the host's own Movie stream.
    @Suite("A host's end gives adopted players back")
    struct HostEndingTests {
        @Test(
            "the adopted player is given back at the user's volume when the host dies, and nothing ducked is saved",
            arguments: HostEnding.processDeaths, EndingPlayer.allCases)
        func ending(_ ending: HostEnding, _ player: EndingPlayer) async throws {
            try await Self.runs(ending, player)
        }

        @Test(
            "any order of an ordinary shutdown gives the adopted pw-play back at the user's volume",
            arguments: HostEnding.shutdownOrders)
        func order(_ ending: HostEnding) async throws {
            try await Self.runs(ending, .pwPlay)
        }

        @Test(
            "an ordinary shutdown gives the adopted mpv back at the user's volume",
            arguments: [HostEnding.minimalHostOrder, .closeWhileDuckedThenShutdown, .shutdownWithStreamsOpen])
        func orderWithMpv(_ ending: HostEnding) async throws {
            try await Self.runs(ending, .mpv)
        }

        @Test(
            "a volume the user sets during the duck is the one the player is given back at",
            arguments: [HostEnding.minimalHostOrder, .killWhileDucked])
        func userChangesVolumeDuringDuck(_ ending: HostEnding) async throws {
            try await Self.runs(ending, .pwPlay, userChanges: true)
        }

        @Test(
            "through a loopback, pw-play is back at the user's volume however the host ends, and no loopback is left",
            arguments: HostEnding.loopbackEndings)
        func throughLoopback(_ ending: HostEnding) async throws {
            try await Self.runs(ending, .pwPlay, carrier: .loopback)
        }

        @Test(
            "through a loopback, mpv is back at the user's volume, and a volume the user sets during the duck holds",
            arguments: [HostEnding.killWhileDucked, .minimalHostOrder])
        func throughLoopbackOthers(_ ending: HostEnding) async throws {
            try await Self.runs(ending, .mpv, carrier: .loopback)
            try await Self.runs(ending, .pwPlay, userChanges: true, carrier: .loopback)
        }

        /// ``endingRuns`` runs, printing each one's figures on a `[measure]` line.
        static func runs(
            _ ending: HostEnding, _ player: EndingPlayer, userChanges: Bool = false,
            carrier: AdoptionCarrier = .softVolumes
        ) async throws {
            try Daemon.requirePrivate()
            for run in 1...endingRuns {
                // With the user's change, the first run goes from 1 to 0.5: the volume given back is then
                // neither 1 nor the one the user had set before the host started.
                let user = endingUserVolume(run: userChanges ? run + 1 : run, player: player)
                let changed: Float? = userChanges ? (user == 1 ? 0.5 : 1) : nil
                let figure = try await Self.run(ending, player, user: user, userChangesTo: changed, carrier: carrier)
                let restored = figure.restore.map { String(format: "%.1f ms", $0.milliseconds) } ?? "never"
                print(
                    "[measure] host ending\(carrier == .loopback ? " (loopback)" : ""): \(ending.rawValue), "
                        + "\(player.rawValue), user volume \(user)"
                        + (changed.map { " then \($0)" } ?? "") + ", run \(run), quantum \(figure.quantum): restored "
                        + "\(restored) after the ending, level after " + String(format: "%+.2f dB", figure.levelAfter))
            }
        }
    }
}
