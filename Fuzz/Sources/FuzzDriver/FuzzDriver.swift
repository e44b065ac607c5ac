// SwiftPM links an executable target's `main` to the module's own entry point, so libFuzzer's `main`
// is never used: each target's `@main` hands its input function to libFuzzer's driver here instead.
#if canImport(Glibc)
    import Glibc
#endif

/// The function libFuzzer calls with each input; it returns 0 (or -1 to keep an input out of the corpus).
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzTarget
) -> Int32

/// Runs libFuzzer with the process's arguments (`-max_total_time=`, a corpus folder, ...) on `target`,
/// and exits with its status.
public func runFuzzer(_ target: FuzzTarget) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(llvmFuzzerRunDriver(&argc, &argv, target))
}
