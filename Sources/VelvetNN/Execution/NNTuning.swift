import Foundation
import VelvetGPU

/// How VelvetNN shapes its launches for one kind of device. None of it changes what a model
/// computes (beyond the order in which a convolution's terms are added); it trades
/// parallelism against repeated work, and the best trade differs between a GPU, where
/// small layers wait on load latency and every launch costs a barrier, and lavapipe, where
/// every invocation and workgroup barrier costs CPU time. `gpu` was swept on the H200 and
/// `cpu` on lavapipe (docs/PERFORMANCE.md); `VELVET_NN_*` variables override single fields
/// for tuning on another device with `velvet bench nn`.
public struct NNTuning: Sendable, Equatable {
    /// Run each depthwise convolution in one launch with the 1x1 convolution reading it.
    public var fuseDepthwisePointwise: Bool
    /// Run two such blocks in one launch where the first feeds only the second (narrow
    /// ones only, in enough tiles: on the H200 pairs of wide blocks, or in few workgroups,
    /// were slower than the blocks apart; docs/PERFORMANCE.md).
    public var fuseBlockPairs: Bool
    /// Run a 1x1 convolution in one launch with the depthwise convolution reading it.
    public var fusePointwiseDepthwise: Bool
    /// The largest tile side a block pair takes (8, 4 or 2), and the smallest it pairs at.
    public var blockPairTileLimit: Int
    public var blockPairMinimumTile: Int
    /// Channel groups beyond which blocks do not pair: of the pair's input (each middle
    /// output loops over them) and of the middle tensor.
    public var blockPairMaxInputGroups: Int
    public var blockPairMaxMiddleGroups: Int
    /// The fewest tiles (workgroups) a pair may run in.
    public var blockPairMinimumWorkgroups: Int
    /// Invocations per pair workgroup: 256, 512 or 1024 (more share each 1x1 output's sum).
    public var blockPairThreads: Int
    /// About how many workgroups a depthwise+1x1 (or 1x1+depthwise) launch spreads over
    /// (more redo the part before the intermediate).
    public var depthwisePointwiseTarget: Int
    /// Depthwise outputs each invocation of a depthwise+1x1 launch computes.
    public var depthwisePerInvocation: Int
    /// Convolutions with fewer output groups than this (and 8 or more input groups) split
    /// each output's sum over several invocations; 0 never.
    public var splitBelow: Int
    /// Terms (taps x input groups) each invocation of a split sum adds, about.
    public var splitTermsPerSlice: Int
    /// Plain convolutions keep at least this many invocations (fewer output groups each).
    public var minimumConvInvocations: Int
    /// Rounds of pixels each workgroup of a global mean sums.
    public var meanRounds: Int
    /// Plain and depthwise convolutions read their input, weights and residual through
    /// texel buffers (nn_tensor_reads.glsl): on lavapipe a storage-buffer load is a branch
    /// per lane and float, a texel fetch one gather.
    public var texelReads: Bool

    public static let gpu = NNTuning(fuseDepthwisePointwise: true, fuseBlockPairs: true, fusePointwiseDepthwise: true, blockPairTileLimit: 8, blockPairMinimumTile: 2,
                                     blockPairMaxInputGroups: 24, blockPairMaxMiddleGroups: 12, blockPairMinimumWorkgroups: 36,
                                     blockPairThreads: 1024, depthwisePointwiseTarget: 66, depthwisePerInvocation: 1,
                                     splitBelow: 16384, splitTermsPerSlice: 2, minimumConvInvocations: 65536, meanRounds: 4,
                                     texelReads: false)
    public static let cpu = NNTuning(fuseDepthwisePointwise: false, fuseBlockPairs: false, fusePointwiseDepthwise: false, blockPairTileLimit: 8, blockPairMinimumTile: 2,
                                     blockPairMaxInputGroups: 256, blockPairMaxMiddleGroups: 256, blockPairMinimumWorkgroups: 0,
                                     blockPairThreads: 256, depthwisePointwiseTarget: 1, depthwisePerInvocation: 16,
                                     splitBelow: 0, splitTermsPerSlice: 2, minimumConvInvocations: 2048, meanRounds: 16,
                                     texelReads: true)

    /// The tuning for `kind` (`cpu` for a software device, else `gpu`), with any
    /// `VELVET_NN_*` overrides from the environment applied.
    public static func forDevice(_ kind: GPUDeviceInfo.Kind,
                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> NNTuning {
        var tuning = kind == .cpu ? cpu : gpu
        func value(_ name: String) -> Int? { environment["VELVET_NN_" + name].flatMap { Int($0) } }
        if let v = value("FUSE_DEPTHWISE") { tuning.fuseDepthwisePointwise = v != 0 }
        if let v = value("FUSE_PAIRS") { tuning.fuseBlockPairs = v != 0 }
        if let v = value("FUSE_POINTWISE_DEPTHWISE") { tuning.fusePointwiseDepthwise = v != 0 }
        if let v = value("PAIR_TILE") { tuning.blockPairTileLimit = max(v, 2) }
        if let v = value("PAIR_MIN_TILE") { tuning.blockPairMinimumTile = max(v, 2) }
        if let v = value("PAIR_MAX_INPUT") { tuning.blockPairMaxInputGroups = max(v, 1) }
        if let v = value("PAIR_MAX_MIDDLE") { tuning.blockPairMaxMiddleGroups = max(v, 1) }
        if let v = value("PAIR_MIN_WORKGROUPS") { tuning.blockPairMinimumWorkgroups = max(v, 0) }
        if let v = value("PAIR_THREADS") { tuning.blockPairThreads = [256, 512, 1024].last { $0 <= v } ?? 256 }
        if let v = value("DEPTHWISE_TARGET") { tuning.depthwisePointwiseTarget = max(v, 1) }
        if let v = value("DEPTHWISE_PER_INVOCATION") { tuning.depthwisePerInvocation = max(v, 1) }
        if let v = value("SPLIT_BELOW") { tuning.splitBelow = max(v, 0) }
        if let v = value("SPLIT_TERMS") { tuning.splitTermsPerSlice = max(v, 1) }
        if let v = value("CONV_INVOCATIONS") { tuning.minimumConvInvocations = max(v, 1) }
        if let v = value("MEAN_ROUNDS") { tuning.meanRounds = max(v, 1) }
        if let v = value("TEXEL_READS") { tuning.texelReads = v != 0 }
        return tuning
    }

    // MARK: - Convolutions

    /// Whether a convolution shares each output among 8-32 invocations: with few outputs
    /// the device is far from full, and each invocation of the plain kernel would loop over
    /// every tap of 8 or more input groups alone.
    func splitsSum(outputs: Int, inputGroups: Int) -> Bool {
        outputs < splitBelow && inputGroups >= 8
    }

    /// Invocations sharing one output of a split sum of `terms` (taps x input groups).
    func splitSlices(terms: Int) -> Int {
        var slices = 8
        while slices < 32 && terms > slices * splitTermsPerSlice { slices *= 2 }
        return slices
    }

    /// Output channel groups one plain conv invocation computes: more reuse of each input
    /// load, while keeping at least `minimumConvInvocations` invocations.
    func outputGroupsPerInvocation(pixels: Int, groups: Int) -> Int {
        for candidate in [4, 2] where groups % candidate == 0 && pixels * groups / candidate >= minimumConvInvocations {
            return candidate
        }
        return 1
    }

    // MARK: - Depthwise + 1x1 (nn_depthwise_pointwise.comp)

    /// How a depthwise+1x1 launch splits a layer: tiles of `pixels` output pixels (about
    /// `depthwisePerInvocation` depthwise outputs per invocation, at most 64 pixels, fewer
    /// when the image is smaller), each tile's output groups spread over workgroups until
    /// there are about `depthwisePointwiseTarget` (each extra one redoes the tile's
    /// depthwise part, each fewer stages more weights), and `slices` invocations sharing one
    /// output's sum when a workgroup has fewer outputs than invocations. The tile's depthwise
    /// output (rows of `pixels` + 1) and its weights share 1792 vec4s of shared memory.
    struct DepthwisePointwiseTiling: Equatable {
        var pixels: Int
        var groupsPerTile: Int
        var slices: Int
        var workgroups: Int
    }

    static let depthwisePointwiseStore = 1792
    static let depthwisePointwiseThreads = 256

    /// Whether a one-pixel tile (a row of 2) and one output group's weights fit the shared store.
    static func depthwisePointwiseFits(middleGroups: Int) -> Bool {
        6 * middleGroups <= depthwisePointwiseStore
    }

    func depthwisePointwiseTiling(pixels: Int, middleGroups: Int, outputGroups: Int) -> DepthwisePointwiseTiling {
        let store = Self.depthwisePointwiseStore, threads = Self.depthwisePointwiseThreads
        // Small layers on a GPU are bound by load latency: each invocation's depthwise
        // outputs are computed one after another, so tiles are cut to a few per invocation.
        var tile = max(min(64, depthwisePerInvocation * threads / middleGroups, pixels), 1)
        while tile > 1 && (tile + 1) * middleGroups + 4 * middleGroups > store { tile -= 1 }
        let tiles = (pixels + tile - 1) / tile
        let chunks = min(max((depthwisePointwiseTarget + tiles - 1) / tiles, 1), outputGroups)
        let fitting = max((store - (tile + 1) * middleGroups) / (4 * middleGroups), 1)
        let groupsPerTile = min((outputGroups + chunks - 1) / chunks, fitting)
        let workgroups = tiles * ((outputGroups + groupsPerTile - 1) / groupsPerTile)
        var slices = 1
        while slices < 16 && tile * groupsPerTile * slices * 2 <= threads && slices * 2 <= middleGroups { slices *= 2 }
        return DepthwisePointwiseTiling(pixels: tile, groupsPerTile: groupsPerTile, slices: slices, workgroups: workgroups)
    }

    // MARK: - Block pairs (nn_block_pair.comp)

    /// The tile side two blocks pair up with under this tuning, for a pair whose output is
    /// `height` x `width`; nil if they do not pair (too wide, or no tile qualifies). Of 8, 4
    /// and 2 (at most `blockPairTileLimit`, at least `blockPairMinimumTile`) that fit shared
    /// memory, the largest that cuts the output into `blockPairMinimumWorkgroups` tiles or
    /// more: each tile is one workgroup running every phase of the pair, so a pair with few
    /// tiles leaves most of a GPU idle.
    func blockPairTile(firstGroups: Int, middleGroups: Int, secondKernel: Int, height: Int, width: Int) -> Int? {
        guard fuseBlockPairs, firstGroups <= blockPairMaxInputGroups, middleGroups <= blockPairMaxMiddleGroups else { return nil }
        return [8, 4, 2].first { tile in
            tile <= blockPairTileLimit && tile >= blockPairMinimumTile
                && Self.blockPairFits(tile: tile, firstGroups: firstGroups, middleGroups: middleGroups, secondKernel: secondKernel)
                && ((height + tile - 1) / tile) * ((width + tile - 1) / tile) >= blockPairMinimumWorkgroups
        }
    }

    /// Invocations sharing each 1x1 output's sum in a pair (nn_block_pair.comp's S): one per
    /// 256 of `blockPairThreads`, fewer where each would sum fewer than 4 middle groups in
    /// the last 1x1 (shorter runs lose more to the partial sums' exchange than they gain:
    /// H200), or where the partial sums (of the larger of the two 1x1 phases) do not fit the
    /// shared memory the tile leaves free.
    func blockPairSlices(tile: Int, firstGroups: Int, middleGroups: Int, outputGroups: Int, secondKernel: Int) -> Int {
        let region = (tile + secondKernel - 1) * (tile + secondKernel - 1)
        let free = 1920 - region * (firstGroups + middleGroups) - tile * tile * middleGroups
        let sums = max(region * middleGroups, tile * tile * outputGroups)
        var slices = blockPairThreads / 256
        while slices > 1 && (sums * slices > free || middleGroups < 4 * slices) { slices /= 2 }
        return slices
    }

    /// Whether a pair's tile fits the kernel's 1920 vec4s of shared memory: the first
    /// depthwise output and the middle tensor on the tile grown by the second depthwise's
    /// reach, and the second depthwise output on the tile.
    static func blockPairFits(tile: Int, firstGroups: Int, middleGroups: Int, secondKernel: Int) -> Bool {
        let region = (tile + secondKernel - 1) * (tile + secondKernel - 1)
        return region * (firstGroups + middleGroups) + tile * tile * middleGroups <= 1920
    }

    // MARK: - 1x1 + depthwise (nn_pointwise_depthwise.comp)

    /// How a 1x1+depthwise launch splits the output: T x T tiles, each tile's channel
    /// groups spread over workgroups (each recomputes the 1x1 on its tile's region for its
    /// own groups).
    struct PointwiseDepthwiseTiling: Equatable {
        var tile: Int
        var groupsPerTile: Int
        var workgroups: Int
    }

    /// The largest tile of 8, 4 and 2 that makes about `depthwisePointwiseTarget`
    /// workgroups (the smallest if none does), with as many groups each as fit the
    /// kernel's 1792 vec4s of shared memory (the groups' 1x1 weights and their 1x1 output on
    /// the region the tile's taps read); nil if not even one group fits.
    func pointwiseDepthwiseTiling(height: Int, width: Int, inputGroups: Int, groups: Int, kernel: Int,
                                  stride: Int) -> PointwiseDepthwiseTiling? {
        var best: PointwiseDepthwiseTiling?
        for tile in [8, 4, 2] {
            let side = (tile - 1) * stride + kernel
            let fitting = 1792 / (inputGroups * 4 + side * side)
            guard fitting >= 1 else { continue }
            let tiles = ((height + tile - 1) / tile) * ((width + tile - 1) / tile)
            let chunks = min(max((depthwisePointwiseTarget + tiles - 1) / tiles, (groups + fitting - 1) / fitting), groups)
            let perTile = (groups + chunks - 1) / chunks
            best = PointwiseDepthwiseTiling(tile: tile, groupsPerTile: perTile, workgroups: tiles * ((groups + perTile - 1) / perTile))
            if best!.workgroups >= depthwisePointwiseTarget { break }
        }
        return best
    }

    // MARK: - Global means (nn_squeeze_excite.comp)

    /// Channel groups nn_squeeze_excite.comp takes, in its input and each layer's output.
    static let squeezeExciteGroupLimit = 256

    /// How a global mean splits the pixels: bands of whole rounds of its 256 invocations
    /// (a power of two pixels a round, 256 / groups at most), `meanRounds` rounds each, at
    /// most 256 bands.
    func squeezeExciteBands(pixels: Int, groups: Int) -> (workgroups: Int, pixelsPerGroup: Int) {
        var lanes = 1
        while lanes * 2 * groups <= 256 { lanes *= 2 }
        var perGroup = lanes * meanRounds
        if (pixels + perGroup - 1) / perGroup > 256 {
            perGroup = ((pixels + 255) / 256 + lanes - 1) / lanes * lanes
        }
        return ((pixels + perGroup - 1) / perGroup, perGroup)
    }

    /// vec4s of scratch a plan's squeeze-and-excite launches need: a header holding the
    /// finish count, then one partial sum per band and channel group (launches take turns).
    func scratchVec4s(for steps: [NNStep], geometry: (Int) -> NNTensorGeometry) -> Int {
        let partials = steps.map { step -> Int in
            guard case .squeezeExcite(let input, _, _, _) = step else { return 0 }
            let a = geometry(input)
            return squeezeExciteBands(pixels: a.pixels, groups: a.groups).workgroups * a.groups
        }
        return 1 + (partials.max() ?? 0)
    }
}
