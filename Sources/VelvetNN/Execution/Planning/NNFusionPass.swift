/// One step of planning, in the manner of ncnn's optimizer passes: a pass looks at the
/// whole graph (before lowering) or the whole step list (after), claims what it fuses
/// (marks the operators it absorbs as skipped, or rewrites and drops steps) and leaves
/// the rest alone. A pass never undoes another's claim.
protocol NNFusionPass: Sendable {
    /// What the pass fuses, for messages and the list below.
    var name: String { get }
    /// Whether the pass runs for this plan (`fuse` off leaves only the lowering).
    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool
    func apply(to planner: inout NNPlanner) throws
}

extension NNPlanner {
    /// The passes, run in this order; the order is the priority where two could claim
    /// the same operator or step.
    ///
    /// Before lowering, on the graph:
    /// 1. A spatial PAD is folded into the convolution reading it.
    /// 2. A channel-tail PAD is folded into the ADD reading it (before 5, which does not
    ///    take an ADD of a folded PAD).
    /// 3. A RESIZE_BILINEAR read only by a 1x1 convolution is read through by it (before
    ///    4: such a resize is not also a residual).
    /// 4. A RESIZE_BILINEAR that is only a residual is sampled by the convolution's epilogue.
    /// 5. An ADD read only by a global mean is summed by the mean.
    ///
    /// 6. Lowering: every operator left becomes steps; activations, residual ADDs, max-pooled
    ///    or resized residuals, a 1x1 convolution after a depthwise, a squeeze-and-excite's
    ///    dense layers, a MUL's ADD and gate are absorbed there (see the Operators folder).
    ///
    /// After lowering, on the steps:
    /// 7. A DEPTH_TO_SPACE read only by an output copy runs in the copy.
    /// 8. An output copy of a depthwise's output is written by the depthwise (after 7, so
    ///    it also takes the copies that now do a DEPTH_TO_SPACE).
    /// 9. A 1x1 convolution read only by a depthwise runs in the depthwise's launch (after 8,
    ///    which it keeps: it fuses into a depthwise writing an output too).
    /// 10. Two depthwise+1x1 blocks in a row become one launch (last: it pairs the blocks
    ///     the lowering fused and nothing fuses into a pair).
    ///
    /// To add a fusion: write a type conforming to `NNFusionPass` in Passes/ and put it in
    /// this list where its priority belongs; the NN plan and model tests compare fused
    /// and unfused plans' outputs.
    static let passes: [any NNFusionPass] = [
        NNFoldSpatialPad(),
        NNFoldChannelPad(),
        NNFoldResizeIntoPointwise(),
        NNFoldResidualResize(),
        NNFoldMeanAddend(),
        NNLowerOperators(),
        NNFoldDepthToSpaceIntoUnpack(),
        NNFoldUnpackIntoDepthwise(),
        NNFusePointwiseIntoDepthwise(),
        NNPairBlocks(),
    ]
}
