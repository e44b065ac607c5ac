/// Where a source's file ends, packed into one `Int` so both sides can compare-exchange it: the seek
/// it belongs to (22 bits, compared modulo 2^22), the ring index after the last frame (40 bits,
/// 265 days at 48 kHz; all ones while unknown), and whether the render side has rendered that far.
struct EndWord: Equatable {
    private static let indexBits = 40
    private static let indexMask = (1 << 40) - 1
    private static let seekMask = (1 << 22) - 1
    private static let heardBit = 1 << 62

    let rawValue: Int

    init(rawValue: Int) { self.rawValue = rawValue }

    /// The end of `seek`'s position at ring index `index`, or not known yet (nil).
    init(seek: Int, index: Int?) {
        rawValue = (seek & Self.seekMask) << Self.indexBits | (index.map { $0 & Self.indexMask } ?? Self.indexMask)
    }

    /// Whether the word belongs to `seek`.
    @inline(__always)
    func belongs(to seek: Int) -> Bool { (rawValue >> Self.indexBits) & Self.seekMask == seek & Self.seekMask }

    /// The ring index after the last frame, if known.
    @inline(__always)
    var index: Int? {
        let field = rawValue & Self.indexMask
        return field == Self.indexMask ? nil : field
    }

    /// Whether the render side has rendered up to the end.
    @inline(__always)
    var heard: Bool { rawValue & Self.heardBit != 0 }

    /// The same end, heard.
    @inline(__always)
    var markedHeard: EndWord { EndWord(rawValue: rawValue | Self.heardBit) }

    /// The same seek's end moved to `index` and heard (the render side ending at a loop point).
    @inline(__always)
    func heard(at index: Int) -> EndWord {
        EndWord(rawValue: (rawValue & ~Self.indexMask | (index & Self.indexMask)) | Self.heardBit)
    }
}
