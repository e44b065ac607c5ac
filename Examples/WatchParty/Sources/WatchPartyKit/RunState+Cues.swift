import Foundation
import SharedSession
import SharedSessionMedia
import SharedSessionPipeWire
import SharedSessionPipeWireTesting

/// What each cue of a scene does to the session, the SDKs' bridges and the platform's events.
extension RunState {
    func open(_ media: Scene.Media, name: String, role: StreamRole, owner: String) throws -> StreamHandle {
        if !labels.contains(name) { labels.append(name) }
        let source = try library.source(for: media, name: name)
        sources.append((name, media, source))
        let handle = try session.openStream(
            StreamDescriptor(name: name, role: role), source: source, volume: media.volume, owner: owner)
        names[handle.id] = name
        return handle
    }

    /// Fades a stream out over 30 ms and closes it after, so it leaves no click in the mix.
    func fadeAndClose(_ handle: StreamHandle) {
        try? handle.setVolume(0)
        pending.append((frame + rate * 3 / 100, handle.descriptor.name, { handle.close() }))
    }

    func lane(_ name: String, on: Bool) {
        if on {
            if laneStarts[name] == nil { laneStarts[name] = now }
        } else if let start = laneStarts.removeValue(forKey: name) {
            laneSpans[name, default: []].append(start...now)
        }
    }

    func apply(_ cue: Scene.Cue) throws {
        let action = cue.action
        if case .mark(let label, _) = action {
            // A reading needs no quantum boundary: the 100 ms before the mark's own time are rendered.
            markers.append(SceneRun.Marker(time: cue.time, caption: label, isMark: true))
            markTimes.append((cue.time, cue))
            view.step(at: cue.time, "mark: \(label)")
            return
        }
        markers.append(SceneRun.Marker(time: now, caption: action.caption, isMark: false))
        view.step(at: now, action.caption + "   (scene line \(cue.line))")
        switch action {
        case .play:
            session.play()
        case .pause:
            session.pause()
        case .volume(let volume):
            try session.setMainVolume(volume)
        case .seek(let time):
            if gstreamer != nil { view.note("host: gst-launch cannot seek; the GStreamer movie plays on") }
            try movieSource?.seek(to: .nanoseconds(Int64((time * 1e9).rounded())))
            seekPending = true
        case .feedStart(let media, let duck):
            try feedBridge.prepareAudioSession(for: .generic)
            if duck { feedBridge.requestAudioDucking() }
            feed = try open(media, name: "feed", role: .music, owner: "social-feed")
            lane("feed clip", on: true)
        case .feedStop:
            if let feed { fadeAndClose(feed) }
            feed = nil
            if feedBridge.heldCounts.ducks > 0 { feedBridge.disableAudioDucking() }
            feedBridge.disableAudioSession(for: .generic)
            lane("feed clip", on: false)
        case .voiceJoin(let media, let helperProcess, let duck):
            if helperProcess {
                // The SDK in a process of its own: it calls the same delegate methods over the socket.
                voiceHelper = try VoiceHelper.join(serving: session, view: view)
            } else {
                try voiceBridge.prepareAudioSession(for: .voice)
                if duck == .level { voiceBridge.requestAudioDucking() }
            }
            let voice = try open(media, name: "voice", role: .communication, owner: "watch-party")
            self.voice = voice
            if case .loudness(let margin) = duck {
                // The voice kept `margin` LU above the movie while the far end speaks, measured on both.
                voiceLoudnessDuck = try session.duck(
                    DuckRequest(owner: "watch-party", style: .followLoudness(voice.id, margin: margin)))
            }
            lane("voice chat", on: true)
        case .voiceLeave:
            if let voice { fadeAndClose(voice) }
            voice = nil
            if let helper = voiceHelper {
                try helper.leave()
                voiceHelper = nil
            } else {
                if let duck = voiceLoudnessDuck {
                    duck.release()
                    voiceLoudnessDuck = nil
                } else {
                    voiceBridge.disableAudioDucking()
                }
                voiceBridge.disableAudioSession(for: .voice)
            }
            lane("voice chat", on: false)
        case .voiceCrash:
            // The far end's voice dies with the helper; its duck and voice session come back when the
            // host sees its connection close.
            if let voice { fadeAndClose(voice) }
            voice = nil
            try voiceHelper?.kill()
            voiceHelper = nil
            lane("voice chat", on: false)
        case .notification(let media, let duck):
            let handle = try open(media, name: "notification", role: .notification, owner: "notifications")
            let duckLease = duck ? session.duck(owner: "notifications") : nil
            notifications.append(handle)
            lane("notification", on: true)
            let end = frame + Int((library.duration(of: media) * Double(rate)).rounded(.up))
            pending.append(
                (
                    end, "notification",
                    { [weak self] in
                        handle.close()
                        duckLease?.release()
                        self?.notifications.removeAll { $0 === handle }
                        self?.lane("notification", on: false)
                    }
                ))
            if let duckLease { notificationDucks.append(duckLease) }
        case .otherAudio(let playing):
            session.handle(playing ? .otherAudioStarted : .otherAudioStopped)
            lane("other app", on: playing)
        case .background:
            session.handle(.didEnterBackground)
            lane("background", on: true)
        case .foreground:
            session.handle(.willEnterForeground)
            lane("background", on: false)
        case .lock:
            quantum = scene.lockedQuantum
            view.note("the platform raises the render quantum to \(quantum) frames")
            lane("screen locked", on: true)
        case .unlock:
            quantum = scene.quantum
            view.note("the render quantum is back to \(quantum) frames")
            lane("screen locked", on: false)
        case .interruptionBegin:
            session.handle(.interruptionBegan)
            lane("interruption", on: true)
        case .interruptionEnd(let resume):
            session.handle(.interruptionEnded(shouldResume: resume))
            lane("interruption", on: false)
        case .routeChange(let reason, let output):
            session.handle(.routeChanged(RouteChange(reason: RouteChangeReason(reason), currentOutput: output)))
        case .mark:
            break
        }
        // Paused by the host, a route change or an interruption that waits for the host: as the session says.
        lane("movie paused", on: session.snapshot.isMainPaused)
    }
}
