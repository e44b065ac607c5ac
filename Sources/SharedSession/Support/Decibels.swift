#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A linear level in dB; −∞ for 0.
@inline(__always)
func decibels(_ level: Float) -> Float { 20 * log10f(level) }

/// A level in dB as a linear factor.
@inline(__always)
func linear(decibels: Float) -> Float { powf(10, decibels / 20) }
