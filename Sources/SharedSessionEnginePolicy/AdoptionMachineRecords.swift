package import SharedSession

/// The records ``AdoptionMachine`` keeps: each adopted stream's gain and ramp, each node's write
/// bookkeeping, what a control asked for.
extension AdoptionMachine {
    /// A session stream made of an adoption rule.
    package struct Member: Equatable {
        package let rule: AdoptionRule
        /// Whether the stream ducks the main while one of its nodes plays (an overlay's).
        package let ducksWhilePlaying: Bool
        /// The gain the nodes are at (or were last written, mid-ramp); what a new node is given.
        package var gain: Float
        package var target: Float
        package var ramp: NodeVolumeRamp?
        package var paused: Bool
        /// Whether the engine is suspended (an interruption, the background): silent like a pause, with
        /// no event for the host.
        package var suspended = false
    }

    /// What a stream's control asked for since the loop last looked.
    package struct Command: Equatable {
        package var gain: Float?
        package var ramp: Duration = .zero
        package var paused: Bool?

        package init(gain: Float? = nil, ramp: Duration = .zero, paused: Bool? = nil) {
            self.gain = gain
            self.ramp = ramp
            self.paused = paused
        }
    }

    /// One adopted node's write bookkeeping.
    package struct Bound {
        package let stream: StreamID
        package let name: String
        /// Our writes of the node's soft volumes, to tell them from another program's.
        package var echoes = VolumeEchoes()
        /// The user's volume: the mean of the node's `channelVolumes`, as last reported; nil until the
        /// node's first `Props` since it was bound.
        package var user: Float?
        /// When the registry announced the node (or, if it never did, when it was bound).
        package let appeared: ContinuousClock.Instant
        /// How many of ``settleWrites`` were made.
        package var settled = 0
        /// Through loopbacks: when the node was moved to its loopback, and whether it stopped running
        /// since, which counts only if it still has not run again ``AdoptionMachine/moveSettle`` after
        /// the move (the move itself stops it for a few cycles).
        package var movedAt: ContinuousClock.Instant?
        package var stopDeferred = false

        /// When the next settle write is due, if one is left.
        package var nextSettle: ContinuousClock.Instant? {
            settled < AdoptionMachine.settleWrites.count ? appeared + AdoptionMachine.settleWrites[settled] : nil
        }
    }

    /// What the machine knows of one node of the graph, from its appearing to its going: forgetting a
    /// node is removing its record.
    package struct Node {
        /// When the registry announced the node, for the adoption latency.
        package var appeared: ContinuousClock.Instant?
        /// When the node was first seen running, and whether it runs as last reported.
        package var firstRunning: ContinuousClock.Instant?
        package var running = false
        /// The last channel volume (the user's) the node reported before it was bound.
        package var reported: Float?
        /// Another client's playback node not counted as other audio yet: while something is adopted, a
        /// new node is other audio only once its properties show no rule adopts it.
        package var undecided: (mediaClass: String, name: String)?
        /// The write bookkeeping while the node is adopted.
        package var bound: Bound?
    }
}
