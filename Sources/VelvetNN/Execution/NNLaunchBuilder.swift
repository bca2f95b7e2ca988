import Foundation
import VelvetGPU
import VelvetKernels

/// Turns planned steps into ready-to-record launches: pipelines, bindings and push
/// constants (each kernel's generated block, filled by name).
struct LaunchBuilder {
    let graph: NNGraph
    let kernels: NNKernels
    let arena: GPUBuffer
    let constants: GPUBuffer
    /// Partial sums and the finish count of the squeeze-and-excite kernel (zeroed once).
    let scratch: GPUBuffer
    let tuning: NNTuning
    /// Where a tensor's packed data lives: its own buffer (a graph input), or a range of
    /// the arena (vec4 offset and count). Launches bind exactly that range, so validation
    /// sees which launches touch which tensors.
    let location: (Int) -> (buffer: GPUBuffer, vec4Offset: Int, vec4Count: Int)
    let outputs: [NNTensor]

    static let workgroupSize = 64

    private func geometry(_ tensor: Int) -> NNTensorGeometry { NNTensorGeometry(shape: graph.tensors[tensor].shape) }

    /// Workgroups for `invocations` in a 1D launch of 64-wide workgroups.
    static func groups(covering invocations: Int) -> (x: Int, y: Int, z: Int) {
        groups(count: (invocations + workgroupSize - 1) / workgroupSize)
    }

    /// `count` workgroups of a 1D launch; past 65535 the rest go to y.
    static func groups(count: Int) -> (x: Int, y: Int, z: Int) {
        let x = min(max(count, 1), 65535)
        return (x, (max(count, 1) + x - 1) / x, 1)
    }

    func launch(for step: NNStep) throws -> NNModelPlan.Launch {
        // Tensors are bound as ranges, so their offsets inside the binding are 0.
        func offset(_ tensor: Int) -> Int32 { 0 }
        func buffer(_ tensor: Int) -> GPUBinding { binding(for: tensor) }

        switch step {
        case .conv(let c), .depthwise(let c), .transposeConv(let c), .depthwiseToOutput(let c, _):
            let a = geometry(c.input), o = geometry(c.output)
            var bindings: [GPUBinding] = [buffer(c.input), buffer(c.output), .buffer(constants)]
            if case .transposeConv = step {
                func push<Push: NNTransposeConvPush>() -> Push {
                    Push(inOffset: offset(c.input), outOffset: offset(c.output), weightOffset: c.weightOffset.i32, biasOffset: c.biasOffset.i32,
                         inH: a.height.i32, inW: a.width.i32, inC4: a.groups.i32, outH: o.height.i32, outW: o.width.i32, outC4: o.groups.i32,
                         outC: o.channels.i32, strideY: c.strideY.i32, strideX: c.strideX.i32, padTop: c.padTop.i32, padLeft: c.padLeft.i32,
                         kernelH: c.kernelH.i32, kernelW: c.kernelW.i32, act1: c.epilogue.act1.code, alpha1Offset: c.epilogue.act1.alphaOffset)
                }
                let groups = Self.groups(covering: o.pixels * o.groups)
                if tuning.texelReads {
                    let kernel = try kernels.kernel(KernelLibrary.NnTransposeConvTexelsPush.self, ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW)])
                    return .init(kernel: kernel, bindings: [try texelBinding(for: c.input), buffer(c.output), try constantTexels()],
                                 push: push() as KernelLibrary.NnTransposeConvTexelsPush, groups: groups)
                }
                return .init(kernel: try kernels.kernel(KernelLibrary.NnTransposeConvPush.self), bindings: bindings,
                             push: push() as KernelLibrary.NnTransposeConvPush, groups: groups)
            }
            // The plain convolution and depthwise kernels read through texel buffers where the
            // tuning says (lavapipe).
            var splits = false
            if case .conv = step { splits = tuning.splitsSum(outputs: o.pixels * o.groups, inputGroups: a.groups) }
            let texels = tuning.texelReads && !splits
            if texels { bindings = [try texelBinding(for: c.input), buffer(c.output), try constantTexels()] }
            let epilogue = try epilogueFields(c.epilogue, texels: texels, bindings: &bindings)
            if case .conv = step {
                let source = residualSource(c.epilogue)
                if texels {
                    bindings.append(try c.inputScale.map(texelBinding) ?? constantTexels())
                } else {
                    bindings.append(c.inputScale.map(buffer) ?? .buffer(constants))
                }
                let resize = c.inputResize ?? NNResize(scaleY: 0, scaleX: 0, centreOffset: 0)
                let resized: Int32 = c.inputResize == nil ? 0 : 1
                func push<Push: NNConvPush>() -> Push {
                    Push(inOffset: offset(c.input), outOffset: offset(c.output), weightOffset: c.weightOffset.i32, biasOffset: c.biasOffset.i32,
                         inH: a.height.i32, inW: a.width.i32, inC4: a.groups.i32, outH: o.height.i32, outW: o.width.i32, outC4: o.groups.i32,
                         outC: o.channels.i32, strideY: c.strideY.i32, strideX: c.strideX.i32, padTop: c.padTop.i32, padLeft: c.padLeft.i32,
                         residualOffset: epilogue.residualOffset, residualC4: epilogue.residualC4, act1: epilogue.act1,
                         alpha1Offset: epilogue.alpha1Offset, act2: epilogue.act2, alpha2Offset: epilogue.alpha2Offset,
                         residualPool: source.pool, residualH: source.height, residualW: source.width,
                         residualScaleY: source.scaleY, residualScaleX: source.scaleX, residualCentre: source.centre,
                         inScaleOffset: c.inputScale.map(offset) ?? 0,
                         resizeScaleY: resize.scaleY, resizeScaleX: resize.scaleX, resizeCentre: resize.centreOffset)
                }
                if splits {
                    // 8-32 invocations per output group (nn_conv_split.comp).
                    let slices = tuning.splitSlices(terms: c.kernelH * c.kernelW * a.groups)
                    let kernel = try kernels.kernel(KernelLibrary.NnConvSplitPush.self,
                                                    ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW), "SCALED": c.inputScale == nil ? 0 : 1,
                                                     "SLICES": Int32(slices), "RESIZED": resized])
                    return .init(kernel: kernel, bindings: bindings, push: push(), groups: Self.groups(covering: o.pixels * o.groups * slices))
                }
                let perInvocation = tuning.outputGroupsPerInvocation(pixels: o.pixels, groups: o.groups)
                let constants = ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW), "OCB": Int32(perInvocation),
                                 "SCALED": c.inputScale == nil ? 0 : 1, "RESIZED": resized]
                let groups = Self.groups(covering: o.pixels * (o.groups / perInvocation))
                if texels {
                    let constants = constants.merging(Self.epilogueKind(c.epilogue)) { $1 }
                    return .init(kernel: try kernels.kernel(KernelLibrary.NnConv2dTexelsPush.self, constants), bindings: bindings,
                                 push: push() as KernelLibrary.NnConv2dTexelsPush, groups: groups)
                }
                return .init(kernel: try kernels.kernel(KernelLibrary.NnConv2dPush.self, constants), bindings: bindings,
                             push: push() as KernelLibrary.NnConv2dPush, groups: groups)
            }
            var specialization = ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW)]
            var dense: (channels: Int32, width: Int32) = (0, 0)
            if case .depthwiseToOutput(_, let output) = step {
                dense = denseOutput(output, channels: o.channels, width: o.width)
                bindings[1] = .buffer(outputs[output.index].buffer) // unwritten
                bindings.append(.buffer(outputs[output.index].buffer))
                specialization["DENSE_BLOCK"] = Int32(output.block)
            } else {
                bindings.append(buffer(c.output)) // the dense output, unwritten
            }
            func push<Push: NNDepthwisePush>() -> Push {
                Push(inOffset: offset(c.input), outOffset: offset(c.output), weightOffset: c.weightOffset.i32, biasOffset: c.biasOffset.i32,
                     inH: a.height.i32, inW: a.width.i32, inC4: a.groups.i32, outH: o.height.i32, outW: o.width.i32, outC4: o.groups.i32,
                     outC: o.channels.i32, strideY: c.strideY.i32, strideX: c.strideX.i32, padTop: c.padTop.i32, padLeft: c.padLeft.i32,
                     residualOffset: epilogue.residualOffset, residualC4: epilogue.residualC4, act1: epilogue.act1,
                     alpha1Offset: epilogue.alpha1Offset, act2: epilogue.act2, alpha2Offset: epilogue.alpha2Offset,
                     denseC: dense.channels, denseW: dense.width)
            }
            let groups = Self.groups(covering: o.pixels * o.groups)
            if texels {
                specialization.merge(Self.epilogueKind(c.epilogue)) { $1 }
                return .init(kernel: try kernels.kernel(KernelLibrary.NnDepthwiseConv2dTexelsPush.self, specialization), bindings: bindings,
                             push: push() as KernelLibrary.NnDepthwiseConv2dTexelsPush, groups: groups)
            }
            return .init(kernel: try kernels.kernel(KernelLibrary.NnDepthwiseConv2dPush.self, specialization), bindings: bindings,
                         push: push() as KernelLibrary.NnDepthwiseConv2dPush, groups: groups)

        case .depthwisePointwise(let d, let c):
            let a = geometry(d.input), m = geometry(d.output), o = geometry(c.output)
            let tiling = tuning.depthwisePointwiseTiling(pixels: o.pixels, middleGroups: m.groups, outputGroups: o.groups)
            var bindings: [GPUBinding] = [buffer(d.input), buffer(c.output), .buffer(constants)]
            let epilogue = try epilogueFields(c.epilogue, texels: false, bindings: &bindings)
            let source = residualSource(c.epilogue)
            let push = KernelLibrary.NnDepthwisePointwisePush(
                inOffset: offset(d.input), outOffset: offset(c.output), dwWeightOffset: d.weightOffset.i32, dwBiasOffset: d.biasOffset.i32,
                inH: a.height.i32, inW: a.width.i32, midC4: m.groups.i32, outH: o.height.i32, outW: o.width.i32, outC4: o.groups.i32,
                outC: o.channels.i32, strideY: d.strideY.i32, strideX: d.strideX.i32, padTop: d.padTop.i32, padLeft: d.padLeft.i32,
                dwAct: d.epilogue.act1.code, dwAlphaOffset: d.epilogue.act1.alphaOffset,
                weightOffset: c.weightOffset.i32, biasOffset: c.biasOffset.i32, outGroupsPerTile: tiling.groupsPerTile.i32,
                residualOffset: epilogue.residualOffset, residualC4: epilogue.residualC4, act1: epilogue.act1,
                alpha1Offset: epilogue.alpha1Offset, act2: epilogue.act2, alpha2Offset: epilogue.alpha2Offset,
                residualPool: source.pool, residualH: source.height, residualW: source.width,
                residualScaleY: source.scaleY, residualScaleX: source.scaleX, residualCentre: source.centre)
            let kernel = try kernels.kernel(KernelLibrary.NnDepthwisePointwisePush.self,
                                            ["KH": Int32(d.kernelH), "KW": Int32(d.kernelW),
                                             "P": Int32(tiling.pixels), "S": Int32(tiling.slices)])
            return .init(kernel: kernel, bindings: bindings, push: push, groups: Self.groups(count: tiling.workgroups))

        case .pointwiseDepthwise(let c, let d, let output):
            let a = geometry(c.input), m = geometry(d.input), o = geometry(d.output)
            guard let tiling = tuning.pointwiseDepthwiseTiling(height: o.height, width: o.width, inputGroups: a.groups, groups: m.groups,
                                                               kernel: d.kernelH, stride: d.strideY) else {
                throw NNError.invalidGraph("a 1x1+depthwise launch was planned that does not fit")
            }
            let dense = output.map { denseOutput($0, channels: o.channels, width: o.width) } ?? (channels: 0, width: 0)
            let written: GPUBinding = output.map { .buffer(outputs[$0.index].buffer) } ?? buffer(d.output)
            let push = KernelLibrary.NnPointwiseDepthwisePush(
                inH: a.height.i32, inW: a.width.i32, inC4: a.groups.i32, midC4: m.groups.i32, outH: o.height.i32, outW: o.width.i32,
                outC: o.channels.i32, groupsPerTile: tiling.groupsPerTile.i32,
                pw: c.weightOffset.i32, pwBias: c.biasOffset.i32, pwAct: c.epilogue.act1.code, pwAlpha: c.epilogue.act1.alphaOffset,
                dw: d.weightOffset.i32, dwBias: d.biasOffset.i32, dwAct: d.epilogue.act1.code, dwAlpha: d.epilogue.act1.alphaOffset,
                padTop: d.padTop.i32, padLeft: d.padLeft.i32, denseC: dense.channels, denseW: dense.width)
            let kernel = try kernels.kernel(KernelLibrary.NnPointwiseDepthwisePush.self,
                                            ["K": Int32(d.kernelH), "STRIDE": Int32(d.strideY), "T": Int32(tiling.tile),
                                             "DENSE_BLOCK": Int32(output?.block ?? 0)])
            // The kernel declares both outputs; the one it does not write is bound to the one it does.
            return .init(kernel: kernel, bindings: [buffer(c.input), written, .buffer(constants), written],
                         push: push, groups: Self.groups(count: tiling.workgroups))

        case .blockPair(let a, let b):
            let x = geometry(a.depthwise.input), y = geometry(a.pointwise.output), z = geometry(b.pointwise.output)
            guard let tile = tuning.blockPairTile(firstGroups: x.groups, middleGroups: y.groups, secondKernel: b.depthwise.kernelH,
                                                  height: z.height, width: z.width) else {
                throw NNError.invalidGraph("a block pair was planned that its tuning does not pair")
            }
            let residual = b.pointwise.epilogue.residual
            let push = KernelLibrary.NnBlockPairPush(
                inH: x.height.i32, inW: x.width.i32, aC4: x.groups.i32, yH: y.height.i32, yW: y.width.i32, bC4: y.groups.i32,
                cC4: z.groups.i32, outC: z.channels.i32,
                dwA: a.depthwise.weightOffset.i32, dwABias: a.depthwise.biasOffset.i32,
                dwAAct: a.depthwise.epilogue.act1.code, dwAAlpha: a.depthwise.epilogue.act1.alphaOffset,
                strideA: a.depthwise.strideY.i32, padTopA: a.depthwise.padTop.i32, padLeftA: a.depthwise.padLeft.i32,
                pwA: a.pointwise.weightOffset.i32, pwABias: a.pointwise.biasOffset.i32,
                pwAAct: a.pointwise.epilogue.act1.code, pwAAlpha: a.pointwise.epilogue.act1.alphaOffset,
                dwB: b.depthwise.weightOffset.i32, dwBBias: b.depthwise.biasOffset.i32,
                dwBAct: b.depthwise.epilogue.act1.code, dwBAlpha: b.depthwise.epilogue.act1.alphaOffset,
                padTopB: b.depthwise.padTop.i32, padLeftB: b.depthwise.padLeft.i32,
                pwB: b.pointwise.weightOffset.i32, pwBBias: b.pointwise.biasOffset.i32,
                act1: b.pointwise.epilogue.act1.code, alpha1: b.pointwise.epilogue.act1.alphaOffset,
                act2: b.pointwise.epilogue.act2.code, alpha2: b.pointwise.epilogue.act2.alphaOffset,
                residualC4: (residual.map { geometry($0).groups } ?? -1).i32)
            let slices = tuning.blockPairSlices(tile: tile, firstGroups: x.groups, middleGroups: y.groups, outputGroups: z.groups,
                                                secondKernel: b.depthwise.kernelH)
            let kernel = try kernels.kernel(KernelLibrary.NnBlockPairPush.self, ["KA": Int32(a.depthwise.kernelH),
                                                                               "KB": Int32(b.depthwise.kernelH), "T": Int32(tile),
                                                                               "THREADS": Int32(tuning.blockPairThreads),
                                                                               "S": Int32(slices)])
            return .init(kernel: kernel,
                         bindings: [buffer(a.depthwise.input), buffer(b.pointwise.output), .buffer(constants),
                                    residual.map(buffer) ?? .buffer(constants)],
                         push: push, groups: Self.groups(count: ((y.height + tile - 1) / tile) * ((y.width + tile - 1) / tile)))

        case .elementwise(let input, let output, let op, let operand, let addend, let activation):
            let o = geometry(output)
            var operandBinding: GPUBinding = .buffer(constants) // unread without an operand
            var operandOffset: Int32 = 0, broadcast: Int32 = 0, operandGroups = 0
            switch operand {
            case .tensor(let t)?:
                (operandBinding, operandOffset, operandGroups) = (buffer(t), offset(t), geometry(t).groups)
            case .broadcastTensor(let t)?:
                (operandBinding, operandOffset, broadcast, operandGroups) = (buffer(t), offset(t), 1, o.groups)
            case .broadcastConstant(let constantOffset)?:
                (operandBinding, operandOffset, broadcast, operandGroups) = (.buffer(constants), constantOffset.i32, 1, o.groups)
            case nil: break
            }
            let hasAddend: Int32 = addend == nil ? 0 : 1
            func push<Push: NNElementwisePush>() -> Push {
                Push(aOffset: offset(input), outOffset: offset(output), bOffset: operandOffset, pixels: o.pixels.i32, c4Count: o.groups.i32,
                     channels: o.channels.i32, op: op, bBroadcast: broadcast, bC4: operandGroups.i32,
                     act: activation.code, alphaOffset: activation.alphaOffset, addendOffset: offset(addend ?? input), hasAddend: hasAddend)
            }
            let groups = Self.groups(covering: o.pixels * o.groups)
            if tuning.texelReads {
                let operandTexels: GPUBinding
                switch operand {
                case .tensor(let t)?, .broadcastTensor(let t)?: operandTexels = try texelBinding(for: t)
                case .broadcastConstant?, nil: operandTexels = try constantTexels()
                }
                let kernel = try kernels.kernel(KernelLibrary.NnElementwiseTexelsPush.self,
                                                ["OP": op, "B_BROADCAST": broadcast, "HAS_ADDEND": hasAddend, "ACT": activation.code])
                return .init(kernel: kernel, bindings: [try texelBinding(for: input), buffer(output), try constantTexels(), operandTexels,
                                                        try texelBinding(for: addend ?? input)],
                             push: push() as KernelLibrary.NnElementwiseTexelsPush, groups: groups)
            }
            return .init(kernel: try kernels.kernel(KernelLibrary.NnElementwisePush.self),
                         bindings: [buffer(input), buffer(output), .buffer(constants), operandBinding, buffer(addend ?? input)],
                         push: push() as KernelLibrary.NnElementwisePush, groups: groups)

        case .squeezeExcite(let input, let addend, let output, let layers):
            let a = geometry(input)
            let bands = tuning.squeezeExciteBands(pixels: a.pixels, groups: a.groups)
            /// Weight and bias offsets, output groups and channels, activation and its alpha; zeros past the layers.
            func layer(_ index: Int) -> (Int32, Int32, Int32, Int32, Int32, Int32) {
                guard index < layers.count else { return (0, 0, 0, 0, 0, 0) }
                let layer = layers[index], o = geometry(layer.output)
                return (layer.weightOffset.i32, layer.biasOffset.i32, o.groups.i32, o.channels.i32,
                        layer.epilogue.act1.code, layer.epilogue.act1.alphaOffset)
            }
            let (first, second) = (layer(0), layer(1))
            func push<Push: NNSqueezeExcitePush>() -> Push {
                Push(inOffset: offset(input), outOffset: offset(output), pixels: a.pixels.i32, inC4: a.groups.i32,
                     addendOffset: offset(addend ?? input), hasAddend: addend == nil ? 0 : 1,
                     pixelsPerGroup: bands.pixelsPerGroup.i32, layers: layers.count.i32,
                     weight1: first.0, bias1: first.1, out1C4: first.2, out1C: first.3, act1: first.4, alpha1: first.5,
                     weight2: second.0, bias2: second.1, out2C4: second.2, out2C: second.3, act2: second.4, alpha2: second.5)
            }
            let groups = (bands.workgroups, 1, 1)
            if tuning.texelReads {
                return .init(kernel: try kernels.kernel(KernelLibrary.NnSqueezeExciteTexelsPush.self),
                             bindings: [try texelBinding(for: input), buffer(output), try constantTexels(), .buffer(scratch),
                                        try texelBinding(for: addend ?? input)],
                             push: push() as KernelLibrary.NnSqueezeExciteTexelsPush, groups: groups)
            }
            return .init(kernel: try kernels.kernel(KernelLibrary.NnSqueezeExcitePush.self),
                         bindings: [buffer(input), buffer(output), .buffer(constants), .buffer(scratch),
                                    buffer(addend ?? input)],
                         push: push() as KernelLibrary.NnSqueezeExcitePush, groups: groups)

        case .pool(let input, let output, let filterH, let filterW, let strideY, let strideX, let padTop, let padLeft,
                   let average, let activation):
            let a = geometry(input), o = geometry(output)
            let push = KernelLibrary.NnPool2dPush(
                inOffset: offset(input), outOffset: offset(output), inH: a.height.i32, inW: a.width.i32, c4Count: a.groups.i32,
                channels: a.channels.i32, outH: o.height.i32, outW: o.width.i32, strideY: strideY.i32, strideX: strideX.i32,
                padTop: padTop.i32, padLeft: padLeft.i32, filterH: filterH.i32, filterW: filterW.i32, isAverage: average ? 1 : 0,
                act: activation.code)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnPool2dPush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.pixels * o.groups))

        case .globalMean(let input, let output, let activation):
            let a = geometry(input)
            let push = KernelLibrary.NnGlobalMeanPush(inOffset: offset(input), outOffset: offset(output), pixels: a.pixels.i32,
                                                      c4Count: a.groups.i32, channels: a.channels.i32, act: activation.code)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnGlobalMeanPush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: (a.groups, 1, 1))

        case .pad(let input, let output, let top, let left, let front):
            let a = geometry(input), o = geometry(output)
            let push = KernelLibrary.NnPadPush(
                inOffset: offset(input), outOffset: offset(output), inH: a.height.i32, inW: a.width.i32, inC: a.channels.i32,
                inC4: a.groups.i32, outH: o.height.i32, outW: o.width.i32, outC: o.channels.i32, outC4: o.groups.i32,
                padTop: top.i32, padLeft: left.i32, padFront: front.i32)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnPadPush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .reshape(let input, let output):
            let a = geometry(input), o = geometry(output)
            let push = KernelLibrary.NnReshapePush(
                inOffset: offset(input), outOffset: offset(output), inW: a.width.i32, inC: a.channels.i32, inC4: a.groups.i32,
                outH: o.height.i32, outW: o.width.i32, outC: o.channels.i32, outC4: o.groups.i32)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnReshapePush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .place(let input, let output, let y0, let x0, let c0):
            let a = geometry(input), o = geometry(output)
            let push = KernelLibrary.NnPlacePush(
                inOffset: offset(input), outOffset: offset(output), inH: a.height.i32, inW: a.width.i32, inC: a.channels.i32,
                inC4: a.groups.i32, outW: o.width.i32, outC: o.channels.i32, outC4: o.groups.i32, y0: y0.i32, x0: x0.i32, c0: c0.i32)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnPlacePush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: a.vec4Count))

        case .depthToSpace(let input, let output, let block):
            let a = geometry(input), o = geometry(output)
            let push = KernelLibrary.NnDepthToSpacePush(
                inOffset: offset(input), outOffset: offset(output), inW: a.width.i32, inC4: a.groups.i32, outH: o.height.i32,
                outW: o.width.i32, outC: o.channels.i32, outC4: o.groups.i32, block: block.i32)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnDepthToSpacePush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .resizeBilinear(let input, let output, let resize):
            let a = geometry(input), o = geometry(output)
            let push = KernelLibrary.NnResizeBilinearPush(
                inOffset: offset(input), outOffset: offset(output), inH: a.height.i32, inW: a.width.i32, c4Count: a.groups.i32,
                outH: o.height.i32, outW: o.width.i32, scaleY: resize.scaleY, scaleX: resize.scaleX, centreOffset: resize.centreOffset)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnResizeBilinearPush.self), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .unpack(let input, let index, let depthToSpace):
            // With a folded DEPTH_TO_SPACE: its output's layout, read from its source.
            let o = geometry(depthToSpace?.output ?? input), source = depthToSpace?.source ?? input
            let push = KernelLibrary.NnUnpackPush(
                inOffset: offset(source), outOffset: 0, pixels: o.pixels.i32, channels: o.channels.i32,
                c4Count: geometry(source).groups.i32, block: (depthToSpace?.block ?? 1).i32, outW: o.width.i32,
                inW: geometry(source).width.i32)
            return .init(kernel: try kernels.kernel(KernelLibrary.NnUnpackPush.self),
                         bindings: [buffer(source), .buffer(outputs[index].buffer)],
                         push: push, groups: Self.groups(covering: o.pixels * o.channels))
        }
    }

    /// The dense output's channels and width, those of a tensor of `channels` and `width`
    /// through the output's DEPTH_TO_SPACE.
    private func denseOutput(_ output: NNDenseOutput, channels: Int, width: Int) -> (channels: Int32, width: Int32) {
        ((channels / (output.block * output.block)).i32, (width * output.block).i32)
    }

    /// A tensor's binding: its own buffer (a graph input), or exactly its range of the arena.
    private func binding(for tensor: Int) -> GPUBinding {
        let place = location(tensor)
        guard place.buffer === arena else { return .buffer(place.buffer) }
        return .bufferRange(arena, offset: place.vec4Offset * 16, size: max(place.vec4Count, 1) * 16)
    }

    /// The residual's offset and channel groups (-1: none) and the two activations of
    /// nn_conv_epilogue.glsl, with the residual's binding (the constants, unread, if none).
    /// `tensor` read through a texel buffer (nn_tensor_reads.glsl), bound as its own range
    /// as `binding(for:)` binds it.
    private func texelBinding(for tensor: Int) throws -> GPUBinding {
        let place = location(tensor)
        let (offset, size) = place.buffer === arena ? (place.vec4Offset * 16, max(place.vec4Count, 1) * 16) : (0, place.buffer.size / 16 * 16)
        try place.buffer.prepareTexels(offset: offset, size: size)
        return .texels(place.buffer, offset: offset, size: size)
    }

    /// The constants read through a texel buffer.
    private func constantTexels() throws -> GPUBinding {
        try constants.prepareTexels(offset: 0, size: constants.size / 16 * 16)
        return .texels(constants, offset: 0, size: constants.size / 16 * 16)
    }

    /// With `texels` the residual is read through a texel buffer.
    private func epilogueFields(_ epilogue: NNEpilogue, texels: Bool, bindings: inout [GPUBinding]) throws
        -> (residualOffset: Int32, residualC4: Int32, act1: Int32, alpha1Offset: Int32, act2: Int32, alpha2Offset: Int32) {
        var residualC4: Int32 = -1
        if let residual = epilogue.residual {
            residualC4 = geometry(residual).groups.i32
            bindings.append(texels ? try texelBinding(for: residual) : binding(for: residual))
        } else {
            bindings.append(texels ? try constantTexels() : .buffer(constants))
        }
        // The residual is bound as its own range: its offset is 0.
        return (0, residualC4, epilogue.act1.code, epilogue.act1.alphaOffset, epilogue.act2.code, epilogue.act2.alphaOffset)
    }

    /// The epilogue's kind fixed at compile time (nn_epilogue_kind.glsl): for the texel
    /// kernels of CPU devices, which would otherwise pay for every activation and every
    /// way of reading the residual on every output.
    static func epilogueKind(_ epilogue: NNEpilogue) -> [String: Int32] {
        let residual: ResidualKind = epilogue.residual == nil ? .none
            : epilogue.residualResize != nil ? .resized : epilogue.residualPool > 0 ? .pooled : .asIs
        return ["ACT1": epilogue.act1.code, "ACT2": epilogue.act2.code, "RESIDUAL": residual.rawValue]
    }

    /// How the epilogue reads its residual (`RESIDUAL_*` in nn_epilogue_kind.glsl).
    enum ResidualKind: Int32 { case none = 0, asIs, pooled, resized }

    /// The fields of nn_conv_epilogue.glsl that say how the residual is read: a fused
    /// skip-path max-pool's window (or -1: a fused bilinear resize), the size of the tensor
    /// pooled or resized, and the resize's scales.
    private func residualSource(_ epilogue: NNEpilogue)
        -> (pool: Int32, height: Int32, width: Int32, scaleY: Float, scaleX: Float, centre: Float) {
        let source = epilogue.residual.map(geometry)
        let resize = epilogue.residualResize ?? NNResize(scaleY: 0, scaleX: 0, centreOffset: 0)
        return ((epilogue.residualResize == nil ? epilogue.residualPool : -1).i32, (source?.height ?? 0).i32,
                (source?.width ?? 0).i32, resize.scaleY, resize.scaleX, resize.centreOffset)
    }
}

/// The push block nn_conv2d.comp and nn_conv_split.comp share (the same convolution, summed
/// by one invocation or split over several): their generated structs conform through their
/// memberwise inits, so a block that drifts from the other stops compiling here.
protocol NNConvPush: KernelPushBlock {
    init(inOffset: Int32, outOffset: Int32, weightOffset: Int32, biasOffset: Int32, inH: Int32, inW: Int32, inC4: Int32,
         outH: Int32, outW: Int32, outC4: Int32, outC: Int32, strideY: Int32, strideX: Int32, padTop: Int32, padLeft: Int32,
         residualOffset: Int32, residualC4: Int32, act1: Int32, alpha1Offset: Int32, act2: Int32, alpha2Offset: Int32,
         residualPool: Int32, residualH: Int32, residualW: Int32, residualScaleY: Float, residualScaleX: Float, residualCentre: Float,
         inScaleOffset: Int32, resizeScaleY: Float, resizeScaleX: Float, resizeCentre: Float)
}

extension KernelLibrary.NnConv2dPush: NNConvPush {}
extension KernelLibrary.NnConv2dTexelsPush: NNConvPush {}
extension KernelLibrary.NnConvSplitPush: NNConvPush {}

/// The push block of nn_depthwise_conv2d.glsl, in its storage-buffer and texel-buffer kernels.
protocol NNDepthwisePush: KernelPushBlock {
    init(inOffset: Int32, outOffset: Int32, weightOffset: Int32, biasOffset: Int32, inH: Int32, inW: Int32, inC4: Int32,
         outH: Int32, outW: Int32, outC4: Int32, outC: Int32, strideY: Int32, strideX: Int32, padTop: Int32, padLeft: Int32,
         residualOffset: Int32, residualC4: Int32, act1: Int32, alpha1Offset: Int32, act2: Int32, alpha2Offset: Int32,
         denseC: Int32, denseW: Int32)
}

extension KernelLibrary.NnDepthwiseConv2dPush: NNDepthwisePush {}
extension KernelLibrary.NnDepthwiseConv2dTexelsPush: NNDepthwisePush {}

/// The push block of nn_transpose_conv.glsl, in its storage-buffer and texel-buffer kernels.
protocol NNTransposeConvPush: KernelPushBlock {
    init(inOffset: Int32, outOffset: Int32, weightOffset: Int32, biasOffset: Int32, inH: Int32, inW: Int32, inC4: Int32,
         outH: Int32, outW: Int32, outC4: Int32, outC: Int32, strideY: Int32, strideX: Int32, padTop: Int32, padLeft: Int32,
         kernelH: Int32, kernelW: Int32, act1: Int32, alpha1Offset: Int32)
}
extension KernelLibrary.NnTransposeConvPush: NNTransposeConvPush {}
extension KernelLibrary.NnTransposeConvTexelsPush: NNTransposeConvPush {}

/// The push block of nn_elementwise.glsl, in its storage-buffer and texel-buffer kernels.
protocol NNElementwisePush: KernelPushBlock {
    init(aOffset: Int32, outOffset: Int32, bOffset: Int32, pixels: Int32, c4Count: Int32, channels: Int32, op: Int32,
         bBroadcast: Int32, bC4: Int32, act: Int32, alphaOffset: Int32, addendOffset: Int32, hasAddend: Int32)
}
extension KernelLibrary.NnElementwisePush: NNElementwisePush {}
extension KernelLibrary.NnElementwiseTexelsPush: NNElementwisePush {}

/// The push block of nn_squeeze_excite.glsl, in its storage-buffer and texel-buffer kernels.
protocol NNSqueezeExcitePush: KernelPushBlock {
    init(inOffset: Int32, outOffset: Int32, pixels: Int32, inC4: Int32, addendOffset: Int32, hasAddend: Int32, pixelsPerGroup: Int32,
         layers: Int32, weight1: Int32, bias1: Int32, out1C4: Int32, out1C: Int32, act1: Int32, alpha1: Int32,
         weight2: Int32, bias2: Int32, out2C4: Int32, out2C: Int32, act2: Int32, alpha2: Int32)
}
extension KernelLibrary.NnSqueezeExcitePush: NNSqueezeExcitePush {}
extension KernelLibrary.NnSqueezeExciteTexelsPush: NNSqueezeExcitePush {}

extension Int {
    /// A push-block field: traps past Int32, as a model too large for the kernels must.
    fileprivate var i32: Int32 { Int32(self) }
}
