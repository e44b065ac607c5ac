// The unit the remote tests and benchmarks spawn as a real process. It connects to a session server
// as `--owner NAME` at `--socket PATH`, then follows commands read from stdin, one per line, and
// answers each on stdout with one line ("ok ...", or "err <code>: <message>"):
//
//   acquire generic|voice        a session lease             -> ok lease <id> <granted type>
//   duck [level] [hold seconds]  a duck                      -> ok lease <id>
//   pause                        a pause request             -> ok lease <id>
//   follow <stream id>           a voice-activity duck       -> ok lease <id>
//   release <id>                 releases a lease it holds   -> ok released <id>
//   prepare|disable generic|voice, request-duck, disable-duck: the OverlayAudioDelegate calls -> ok
//   snapshot                     -> ok snapshot gain <main gain> ducks <count> leases <count>
//   events <n>                   waits for n events          -> event <kind> (n lines), ok events
//   raw <json>                   writes a line as it is (a raw connection: see --raw)
//   leave                        leaves cleanly              -> ok left
//
// With `--flood`, it sends requests as fast as it can on a raw connection and never stops; with
// `--raw`, it speaks the protocol by hand (for bad lines) and prints every line the host sends.
import SharedSession
import SharedSessionRemote

#if canImport(Glibc)
    import Glibc
#endif

@main
struct RemoteUnit {
    static func main() {
        var arguments = CommandLine.arguments.dropFirst()
        var socketPath = ""
        var owner = "remote-unit"
        var mode = "calls"
        var readAfter: UInt32?
        while let argument = arguments.popFirst() {
            switch argument {
            case "--socket": socketPath = arguments.popFirst() ?? ""
            case "--owner": owner = arguments.popFirst() ?? ""
            case "--flood": mode = "flood"
            case "--raw": mode = "raw"
            case "--read-after": readAfter = UInt32(arguments.popFirst() ?? "")
            default:
                say("err usage: unknown argument \(argument)")
                exit(2)
            }
        }
        switch mode {
        case "flood": flood(socketPath, owner: owner)
        case "raw": raw(socketPath, readAfter: readAfter)
        default: calls(socketPath, owner: owner)
        }
    }

    /// One line to stdout, written at once: no stdio buffer (and no `fflush(NULL)`, which would wait
    /// for stdin's lock while the main thread blocks reading it).
    static func say(_ line: String) {
        _ = RawSocket.write(1, Array((line + "\n").utf8))
    }

    static func calls(_ path: String, owner: String) {
        let remote: RemoteSession
        do {
            remote = try RemoteSession(path: path, owner: owner)
        } catch {
            say("err \(error.code): \(error.message)")
            exit(1)
        }
        let events = EventQueue(remote.events)
        say("ok welcome \(remote.owner) previous=\(remote.welcome.previous ?? "none")")
        let delegate = remote.makeDelegate()
        var leases: [UInt64: RemoteLease] = [:]
        while let line = readLine() {
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first else { continue }
            do throws(SessionError) {
                switch command {
                case "acquire":
                    let lease = try remote.acquire(words.count > 1 && words[1] == "voice" ? .voice : .generic)
                    leases[lease.id.rawValue] = lease
                    guard case .session(let type) = lease.kind else { continue }
                    say("ok lease \(lease.id.rawValue) \(type)")
                case "duck":
                    let level = words.count > 1 ? Float(words[1]) : nil
                    let hold = words.count > 2 ? Double(words[2]).map { Duration.milliseconds($0 * 1000) } : nil
                    let lease = try remote.duck(.duck(level: level), maximumHold: hold)
                    leases[lease.id.rawValue] = lease
                    say("ok lease \(lease.id.rawValue)")
                case "pause":
                    let lease = try remote.duck(.pause)
                    leases[lease.id.rawValue] = lease
                    say("ok lease \(lease.id.rawValue)")
                case "follow":
                    let stream = StreamID(rawValue: UInt64(words.count > 1 ? words[1] : "") ?? 0)
                    let lease = try remote.duck(.followActivity(.stream(stream), level: nil))
                    leases[lease.id.rawValue] = lease
                    say("ok lease \(lease.id.rawValue)")
                case "release":
                    let id = UInt64(words.count > 1 ? words[1] : "") ?? 0
                    if let lease = leases.removeValue(forKey: id) { try lease.release() }
                    say("ok released \(id)")
                case "prepare":
                    do {
                        try delegate.prepareAudioSession(
                            for: words.count > 1 && words[1] == "voice" ? .voice : .generic)
                    } catch let error as SessionError {
                        throw error
                    } catch {
                        say("err \(error)")
                        continue
                    }
                    say("ok")
                case "disable":
                    delegate.disableAudioSession(for: words.count > 1 && words[1] == "voice" ? .voice : .generic)
                    say("ok")
                case "request-duck":
                    delegate.requestAudioDucking()
                    say("ok")
                case "disable-duck":
                    delegate.disableAudioDucking()
                    say("ok")
                case "snapshot":
                    let snapshot = try remote.snapshot()
                    let gain = (Double(snapshot.mainGain) * 10_000).rounded() / 10_000
                    say("ok snapshot gain \(gain) ducks \(snapshot.ducks.count) leases \(snapshot.leases.count)")
                case "events":
                    for _ in 0..<(Int(words.count > 1 ? words[1] : "1") ?? 1) {
                        guard let event = events.next() else {
                            say("err no more events")
                            break
                        }
                        say("event \(event)")
                    }
                    say("ok events")
                case "leave":
                    remote.leave()
                    say("ok left")
                    exit(0)
                default:
                    say("err unknown command \(command)")
                }
            } catch {
                say("err \(error.code): \(error.message)")
            }
        }
        // stdin closed: exit without leaving, as a crashed unit would.
        exit(0)
    }

    /// Writes lines by hand and prints every line the host sends back.
    /// With `readAfter` (milliseconds), it reads nothing the host sends until then: a unit that stops
    /// reading (0xFFFFFFFF: never).
    static func raw(_ path: String, readAfter: UInt32?) {
        let fd = RawSocket.connect(path)
        guard fd >= 0 else {
            say("err connect: errno \(errno)")
            exit(1)
        }
        let reader = RawSocket.Reader(fd: fd, delay: readAfter) { say("host \($0)") }
        reader.start()
        while let line = readLine() {
            guard line.hasPrefix("raw ") else { continue }
            RawSocket.write(fd, Array(line.dropFirst(4).utf8) + [10])
        }
        exit(0)
    }

    /// Requests as fast as the socket takes them, without waiting for replies (a thread drains them):
    /// snapshots and unbalanced releases, each of which the host must take through its session.
    static func flood(_ path: String, owner: String) {
        let fd = RawSocket.connect(path)
        guard fd >= 0 else {
            say("err connect: errno \(errno)")
            exit(1)
        }
        RawSocket.write(fd, Array(#"{"hello":{"protocol":1,"owner":"\#(owner)"}}"#.utf8) + [10])
        let reader = RawSocket.Reader(fd: fd) { _ in }
        reader.start()
        say("ok flooding")
        var id = 0
        while true {
            id += 1
            let line =
                id % 2 == 0
                ? #"{"id":\#(id),"snapshot":{}}"#
                : #"{"id":\#(id),"input":{"kind":"ignoredRelease","owner":"\#(owner)","what":"flood","cause":{"kind":"host"}}}"#
            guard RawSocket.write(fd, Array(line.utf8) + [10]) else { exit(0) }
        }
    }
}

/// The next events of a stream, for a synchronous loop.
final class EventQueue: @unchecked Sendable {
    // @unchecked: `items` and `ended` are only touched with `condition` locked.
    private var items: [RemoteEvent] = []
    private var ended = false
    private var condition = pthread_cond_t()
    private var mutex = pthread_mutex_t()

    init(_ stream: AsyncStream<RemoteEvent>) {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
        Task.detached { [self] in
            for await event in stream { push(event) }
            finish()
        }
    }

    private func push(_ event: RemoteEvent) {
        pthread_mutex_lock(&mutex)
        items.append(event)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    private func finish() {
        pthread_mutex_lock(&mutex)
        ended = true
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// The next event's kind, in short; `nil` when the stream ended.
    func next() -> String? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.isEmpty && !ended { pthread_cond_wait(&condition, &mutex) }
        guard !items.isEmpty else { return nil }
        switch items.removeFirst() {
        case .event(let event): return String("\(event.kind)".prefix { $0 != "(" })
        case .eventsLost(let count): return "eventsLost \(count)"
        case .disconnected(let error): return "disconnected \(error.code)"
        }
    }
}

/// A socket spoken to by hand.
enum RawSocket {
    static func connect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? fd : -1
    }

    @discardableResult
    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Reads lines on a thread of its own and hands each to `line`.
    final class Reader: @unchecked Sendable {
        // @unchecked: the thread is the only one that touches the reader after start().
        let fd: Int32
        let line: @Sendable (String) -> Void
        let delay: UInt32?
        private var thread = pthread_t()

        init(fd: Int32, delay: UInt32? = nil, line: @escaping @Sendable (String) -> Void) {
            self.fd = fd
            self.delay = delay
            self.line = line
        }

        func start() {
            let retained = Unmanaged.passRetained(self)
            pthread_create(
                &thread, nil,
                { raw in
                    let reader = Unmanaged<Reader>.fromOpaque(raw!).takeRetainedValue()
                    reader.run()
                    return nil
                }, retained.toOpaque())
        }

        private func run() {
            if let delay {
                if delay == .max { while true { pause() } }
                usleep(delay * 1000)
            }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else {
                    line("closed")
                    return
                }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 10) {
                    line(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
        }
    }
}
