import Foundation

/// BS.1770's K-weighting as the standard gives it (Tables 1 and 2, 48 kHz), evaluated in the frequency
/// domain: what the tests compare the meter's time-domain filtering against, and what turns a sine's
/// level into its loudness.
package enum KWeighting {
    /// |H(e^jω)|² of the standard's two biquads at `frequency` (Hz), at 48 kHz.
    package static func power(at frequency: Double) -> Double {
        let omega = 2 * Double.pi * frequency / 48_000
        func magnitude(_ c: [Double]) -> Double {
            let re = c[0] + c[1] * cos(-omega) + c[2] * cos(-2 * omega)
            let im = c[1] * sin(-omega) + c[2] * sin(-2 * omega)
            return re * re + im * im
        }
        let shelf =
            magnitude([1.53512485958697, -2.69169618940638, 1.19839281085285])
            / magnitude([1, -1.69065929318241, 0.73248077421585])
        let highPass = magnitude([1, -2, 1]) / magnitude([1, -1.99004745483398, 0.99007225036621])
        return shelf * highPass
    }

    /// The loudness in LUFS of a sine of peak `level` dBFS at `frequency` on both channels of a stereo
    /// signal: −0.691 + 10 log10(2 × A²/2 × |H|²).
    package static func stereoSineLoudness(level: Double, frequency: Double) -> Double {
        -0.691 + level + 10 * log10(power(at: frequency))
    }
}
