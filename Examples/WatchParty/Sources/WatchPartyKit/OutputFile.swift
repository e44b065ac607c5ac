import Foundation

/// A file `watch-party` writes when a scene has played (the mix, with the plot beside it; a session
/// recording), checked before the scene plays: a mistyped folder then fails at once, not after the
/// whole scene has played.
public enum OutputFile {
    /// Why a path cannot be written; `description` names the option, the path and what to do.
    public struct Unwritable: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Checks that a file can be written at `path` (given to `option`, such as `--output`): its folder
    /// exists, is a folder and is writable, and the path itself is not a folder. Creates nothing.
    ///
    /// - Throws: ``Unwritable`` saying which of these does not hold.
    public static func check(_ path: String, option: String) throws(Unwritable) {
        func refuse(_ why: String) -> Unwritable { Unwritable(description: "\(option) \(path): \(why)") }
        guard !path.isEmpty, !path.hasSuffix("/") else {
            throw refuse("not a file name; give one such as \(path)watch-party.wav")
        }
        let file = URL(fileURLWithPath: path).standardizedFileURL
        let folder = file.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw refuse("the folder \(folder) does not exist; create it first, or write somewhere else")
        }
        guard isFolder.boolValue else { throw refuse("\(folder) is not a folder") }
        guard access(folder, W_OK) == 0 else {
            throw refuse("the folder \(folder) is not writable (\(String(cString: strerror(errno))))")
        }
        if FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder) {
            guard !isFolder.boolValue else {
                throw refuse("is a folder; give a file name in it, such as \(file.path)/watch-party.wav")
            }
            guard access(file.path, W_OK) == 0 else {
                throw refuse("the file exists and cannot be overwritten (\(String(cString: strerror(errno))))")
            }
        }
    }
}
