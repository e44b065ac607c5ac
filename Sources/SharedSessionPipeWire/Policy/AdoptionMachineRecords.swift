import SharedSession

/// The records ``AdoptionMachine`` keeps: each adopted stream's gain and ramp, each node's write
/// bookkeeping, what a control asked for.
extension AdoptionMachine {
    /// A session stream made of an adoption rule.
    struct Member: Equatable {
        let rule: AdoptionRule
        /// Whether the stream ducks the main while one of its nodes plays (an overlay's).
        let ducksWhilePlaying: Bool
        /// The gain the nodes are at (or were last written, mid-ramp); what a new node is given.
        var gain: Float
        var target: Float
        var ramp: NodeVolumeRamp?
        var paused: Bool
        /// Whether the engine is suspended (an interruption, the background): silent like a pause, with
        /// no event for the host.
        var suspended = false
    }

    /// What a stream's control asked for since the loop last looked.
    struct Command: Equatable {
        var gain: Float?
        var ramp: Duration = .zero
        var paused: Bool?
    }

    /// One adopted node's write bookkeeping.
    struct Bound {
        let stream: StreamID
        let name: String
        /// Our writes of the node's soft volumes, to tell them from another program's.
        var echoes = VolumeEchoes()
        /// The user's volume: the mean of the node's `channelVolumes`, as last reported; nil until the
        /// node's first `Props` since it was bound.
        var user: Float?
        /// When the registry announced the node (or, if it never did, when it was bound).
        let appeared: ContinuousClock.Instant
        /// How many of ``settleWrites`` were made.
        var settled = 0
        /// Through loopbacks: when the node was moved to its loopback, and whether it stopped running
        /// since, which counts only if it still has not run again ``AdoptionMachine/moveSettle`` after
        /// the move (the move itself stops it for a few cycles).
        var movedAt: ContinuousClock.Instant?
        var stopDeferred = false

        /// When the next settle write is due, if one is left.
        var nextSettle: ContinuousClock.Instant? {
            settled < AdoptionMachine.settleWrites.count ? appeared + AdoptionMachine.settleWrites[settled] : nil
        }
    }

    /// What the machine knows of one node of the graph, from its appearing to its going: forgetting a
    /// node is removing its record.
    struct Node {
        /// When the registry announced the node, for the adoption latency.
        var appeared: ContinuousClock.Instant?
        /// When the node was first seen running, and whether it runs as last reported.
        var firstRunning: ContinuousClock.Instant?
        var running = false
        /// The last channel volume (the user's) the node reported before it was bound.
        var reported: Float?
        /// Another client's playback node not counted as other audio yet: while something is adopted, a
        /// new node is other audio only once its properties show no rule adopts it.
        var undecided: (mediaClass: String, name: String)?
        /// The write bookkeeping while the node is adopted.
        var bound: Bound?
    }
}
