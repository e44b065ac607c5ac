#if canImport(Glibc)
    import Glibc
#endif

/// The message of the last call each thread made: a C string per thread, owned by the library, freed
/// when it is replaced or the thread ends (the key's destructor).
enum LastError {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, { free($0) }) == 0 else { fatalError("pthread_key_create failed") }
        return key
    }()

    private static let empty: StaticString = ""

    /// Replaces this thread's message.
    static func set(_ message: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, message.isEmpty ? nil : UnsafeRawPointer(strdup(message)))
        free(old)
    }

    /// This thread's message, or "" after a call that succeeded; valid until this thread's next call.
    static var current: UnsafePointer<CChar> {
        guard let message = pthread_getspecific(key) else {
            return UnsafeRawPointer(empty.utf8Start).assumingMemoryBound(to: CChar.self)
        }
        return UnsafePointer(message.assumingMemoryBound(to: CChar.self))
    }
}
