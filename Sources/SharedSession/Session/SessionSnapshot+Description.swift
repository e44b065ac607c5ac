/// What `print(session.snapshot)` shows: a short block a developer reads while debugging, the same
/// facts as the watch-party's panel. `debugDescription` (`debugPrint`, `po`) keeps every field.
extension SessionSnapshot: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        var lines = ["SessionSnapshot"]
        lines.append("  configuration: \(activeConfiguration.map { "\($0)" } ?? "inactive")")
        let held = leases.map { "\($0.type) \($0.id) of \($0.owner), held \(Self.seconds(age(of: $0)))" }
        lines.append("  leases: \(held.isEmpty ? "none" : held.joined(separator: "; "))")
        let ducking = ducks.map { duck in
            var line = "\(duck), held \(Self.seconds(age(of: duck)))"
            if let left = timeLeft(of: duck) { line += ", released in \(Self.seconds(left))" }
            if !duck.appliedLimits.isEmpty {
                line += " (limited: \(duck.appliedLimits.map(\.description).joined(separator: ", ")))"
            }
            return line
        }
        lines.append("  ducks: \(ducking.isEmpty ? "none" : ducking.joined(separator: "; "))")
        var main =
            "  main: volume \(Self.level(mainVolume)) × duck \(Self.level(duckFactor)) = gain \(Self.level(mainGain))"
        main += isMainPaused ? ", paused" : ", playing"
        if !hostWantsPlayback { main += " (the host paused)" }
        if let loudnessDuck { main += ", loudness duck: \(loudnessDuck)" }
        lines.append(main)
        var system = "  interruption: \(interruption), \(isInBackground ? "background" : "foreground")"
        if isSuspended { system += ", rendering suspended" }
        if isOtherAudioPlaying { system += ", other audio playing" }
        if isBackgroundMusicMuted { system += ", background music muted" }
        lines.append(system)
        var engine = "  engine: \(isEngineConnected ? "connected" : "disconnected")"
        if quantum > 0 { engine += ", quantum \(quantum)" }
        if let currentRoute { engine += ", route \(currentRoute)" }
        lines.append(engine)
        let playing = streams.map {
            "\($0.id) \($0.descriptor.name) gain \(Self.level($0.gain))\($0.isPaused ? " paused" : "")"
        }
        lines.append("  streams: \(playing.isEmpty ? "none" : playing.joined(separator: "; "))")
        return lines.joined(separator: "\n")
    }

    /// Every field, as the compiler would print it.
    public var debugDescription: String {
        let fields = Mirror(reflecting: self).children.map { "\($0.label ?? "_"): \(String(reflecting: $0.value))" }
        return "SessionSnapshot(\(fields.joined(separator: ", ")))"
    }

    /// A level to three decimals, the precision a reader compares.
    private static func level(_ value: Float) -> String {
        let thousandths = Int64((value * 1000).rounded())
        return "\(thousandths / 1000).\(String(format3: thousandths % 1000))"
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.inMilliseconds
        return "\(milliseconds / 1000).\(String(format3: milliseconds % 1000)) s"
    }
}

extension String {
    /// A number from 0 to 999 with three digits.
    fileprivate init(format3 value: Int64) {
        let digits = String(value)
        self = String(repeating: "0", count: 3 - digits.count) + digits
    }
}

extension InterruptionPhase: CustomStringConvertible {
    public var description: String {
        switch self {
        case .none: "none"
        case .interrupted: "interrupted"
        case .endedWaitingForHost: "ended, waiting for the host to play"
        }
    }
}
