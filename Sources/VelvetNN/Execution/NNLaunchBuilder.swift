import Foundation
import VelvetGPU
import VelvetKernels

/// Turns planned steps into ready-to-record launches: pipelines, bindings and push
/// constants (field order matches each kernel's push-constant block).
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
        var push = PushConstants()
        func ints(_ values: Int...) { for v in values { push.int(Int32(v)) } }
        // Tensors are bound as ranges, so their offsets inside the binding are 0.
        func offset(_ tensor: Int) -> Int { 0 }
        func buffer(_ tensor: Int) -> GPUBinding { binding(for: tensor) }

        switch step {
        case .conv(let c), .depthwise(let c), .transposeConv(let c), .depthwiseToOutput(let c, _):
            let a = geometry(c.input), o = geometry(c.output)
            ints(offset(c.input), offset(c.output), c.weightOffset, c.biasOffset, a.height, a.width, a.groups,
                 o.height, o.width, o.groups, o.channels, c.strideY, c.strideX, c.padTop, c.padLeft)
            let kernel: ComputeKernel
            var bindings: [GPUBinding] = [buffer(c.input), buffer(c.output), .buffer(constants)]
            var invocations = o.pixels * o.groups
            if case .transposeConv = step {
                ints(c.kernelH, c.kernelW)
                push.int(c.epilogue.act1.code)
                push.int(c.epilogue.act1.alphaOffset)
                kernel = try kernels.kernel(KernelLibrary.nnTransposeConv)
            } else {
                pushEpilogue(c.epilogue, into: &push, bindings: &bindings)
                if case .conv = step {
                    pushResidualSource(c.epilogue, into: &push)
                    push.int(Int32(c.inputScale.map(offset) ?? 0))
                    bindings.append(c.inputScale.map(buffer) ?? .buffer(constants))
                    let resize = c.inputResize ?? NNResize(scaleY: 0, scaleX: 0, centreOffset: 0)
                    push.float(resize.scaleY)
                    push.float(resize.scaleX)
                    push.float(resize.centreOffset)
                }
                let resized: Int32 = c.inputResize == nil ? 0 : 1
                if case .depthwise = step {
                    kernel = try kernels.kernel(KernelLibrary.nnDepthwiseConv2d,
                                                ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW)])
                    ints(0, 0)
                    bindings.append(buffer(c.output)) // the dense output, unwritten
                } else if case .depthwiseToOutput(_, let output) = step {
                    pushDenseOutput(output, channels: o.channels, width: o.width, into: &push)
                    bindings[1] = .buffer(outputs[output.index].buffer) // unwritten
                    bindings.append(.buffer(outputs[output.index].buffer))
                    kernel = try kernels.kernel(KernelLibrary.nnDepthwiseConv2d, ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW),
                                                                                  "DENSE_BLOCK": Int32(output.block)])
                } else if tuning.splitsSum(outputs: o.pixels * o.groups, inputGroups: a.groups) {
                    // 8-32 invocations per output group (nn_conv_split.comp).
                    let slices = tuning.splitSlices(terms: c.kernelH * c.kernelW * a.groups)
                    invocations = o.pixels * o.groups * slices
                    kernel = try kernels.kernel(KernelLibrary.nnConvSplit, ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW),
                                                                            "SCALED": c.inputScale == nil ? 0 : 1,
                                                                            "SLICES": Int32(slices), "RESIZED": resized])
                } else {
                    let perInvocation = tuning.outputGroupsPerInvocation(pixels: o.pixels, groups: o.groups)
                    invocations = o.pixels * (o.groups / perInvocation)
                    kernel = try kernels.kernel(KernelLibrary.nnConv2d, ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW),
                                                                         "OCB": Int32(perInvocation),
                                                                         "SCALED": c.inputScale == nil ? 0 : 1, "RESIZED": resized])
                }
            }
            return .init(kernel: kernel, bindings: bindings, push: push, groups: Self.groups(covering: invocations))

        case .depthwisePointwise(let d, let c):
            let a = geometry(d.input), m = geometry(d.output), o = geometry(c.output)
            let tiling = tuning.depthwisePointwiseTiling(pixels: o.pixels, middleGroups: m.groups, outputGroups: o.groups)
            ints(offset(d.input), offset(c.output), d.weightOffset, d.biasOffset, a.height, a.width, m.groups,
                 o.height, o.width, o.groups, o.channels, d.strideY, d.strideX, d.padTop, d.padLeft)
            push.int(d.epilogue.act1.code)
            push.int(d.epilogue.act1.alphaOffset)
            ints(c.weightOffset, c.biasOffset, tiling.groupsPerTile)
            var bindings: [GPUBinding] = [buffer(d.input), buffer(c.output), .buffer(constants)]
            pushEpilogue(c.epilogue, into: &push, bindings: &bindings)
            pushResidualSource(c.epilogue, into: &push)
            let kernel = try kernels.kernel(KernelLibrary.nnDepthwisePointwise,
                                            ["KH": Int32(d.kernelH), "KW": Int32(d.kernelW),
                                             "P": Int32(tiling.pixels), "S": Int32(tiling.slices)])
            return .init(kernel: kernel, bindings: bindings, push: push, groups: Self.groups(count: tiling.workgroups))

        case .pointwiseDepthwise(let c, let d, let output):
            let a = geometry(c.input), m = geometry(d.input), o = geometry(d.output)
            guard let tiling = tuning.pointwiseDepthwiseTiling(height: o.height, width: o.width, inputGroups: a.groups, groups: m.groups,
                                                               kernel: d.kernelH, stride: d.strideY) else {
                throw NNError.invalidGraph("a 1x1+depthwise launch was planned that does not fit")
            }
            ints(a.height, a.width, a.groups, m.groups, o.height, o.width, o.channels, tiling.groupsPerTile)
            ints(c.weightOffset, c.biasOffset)
            push.int(c.epilogue.act1.code)
            push.int(c.epilogue.act1.alphaOffset)
            ints(d.weightOffset, d.biasOffset)
            push.int(d.epilogue.act1.code)
            push.int(d.epilogue.act1.alphaOffset)
            ints(d.padTop, d.padLeft)
            let written: GPUBinding
            if let output {
                pushDenseOutput(output, channels: o.channels, width: o.width, into: &push)
                written = .buffer(outputs[output.index].buffer)
            } else {
                ints(0, 0)
                written = buffer(d.output)
            }
            let kernel = try kernels.kernel(KernelLibrary.nnPointwiseDepthwise, ["K": Int32(d.kernelH), "STRIDE": Int32(d.strideY),
                                                                                "T": Int32(tiling.tile),
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
            ints(x.height, x.width, x.groups, y.height, y.width, y.groups, z.groups, z.channels)
            ints(a.depthwise.weightOffset, a.depthwise.biasOffset)
            push.int(a.depthwise.epilogue.act1.code)
            push.int(a.depthwise.epilogue.act1.alphaOffset)
            ints(a.depthwise.strideY, a.depthwise.padTop, a.depthwise.padLeft, a.pointwise.weightOffset, a.pointwise.biasOffset)
            push.int(a.pointwise.epilogue.act1.code)
            push.int(a.pointwise.epilogue.act1.alphaOffset)
            ints(b.depthwise.weightOffset, b.depthwise.biasOffset)
            push.int(b.depthwise.epilogue.act1.code)
            push.int(b.depthwise.epilogue.act1.alphaOffset)
            ints(b.depthwise.padTop, b.depthwise.padLeft, b.pointwise.weightOffset, b.pointwise.biasOffset)
            push.int(b.pointwise.epilogue.act1.code)
            push.int(b.pointwise.epilogue.act1.alphaOffset)
            push.int(b.pointwise.epilogue.act2.code)
            push.int(b.pointwise.epilogue.act2.alphaOffset)
            let residual = b.pointwise.epilogue.residual
            ints(residual.map { geometry($0).groups } ?? -1)
            let slices = tuning.blockPairSlices(tile: tile, firstGroups: x.groups, middleGroups: y.groups, outputGroups: z.groups,
                                                secondKernel: b.depthwise.kernelH)
            let kernel = try kernels.kernel(KernelLibrary.nnBlockPair, ["KA": Int32(a.depthwise.kernelH),
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
            var operandOffset = 0, broadcast = 0, operandGroups = 0
            switch operand {
            case .tensor(let t)?:
                (operandBinding, operandOffset, operandGroups) = (buffer(t), offset(t), geometry(t).groups)
            case .broadcastTensor(let t)?:
                (operandBinding, operandOffset, broadcast, operandGroups) = (buffer(t), offset(t), 1, o.groups)
            case .broadcastConstant(let constantOffset)?:
                (operandBinding, operandOffset, broadcast, operandGroups) = (.buffer(constants), constantOffset, 1, o.groups)
            case nil: break
            }
            ints(offset(input), offset(output), operandOffset, o.pixels, o.groups, o.channels)
            push.int(op)
            ints(broadcast, operandGroups)
            push.int(activation.code)
            push.int(activation.alphaOffset)
            ints(offset(addend ?? input), addend == nil ? 0 : 1)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnElementwise),
                         bindings: [buffer(input), buffer(output), .buffer(constants), operandBinding, buffer(addend ?? input)],
                         push: push, groups: Self.groups(covering: o.pixels * o.groups))

        case .squeezeExcite(let input, let addend, let output, let layers):
            let a = geometry(input)
            let bands = tuning.squeezeExciteBands(pixels: a.pixels, groups: a.groups)
            ints(offset(input), offset(output), a.pixels, a.groups, offset(addend ?? input), addend == nil ? 0 : 1,
                 bands.pixelsPerGroup, layers.count)
            for index in 0..<2 {
                if index < layers.count {
                    let layer = layers[index], o = geometry(layer.output)
                    ints(layer.weightOffset, layer.biasOffset, o.groups, o.channels)
                    push.int(layer.epilogue.act1.code)
                    push.int(layer.epilogue.act1.alphaOffset)
                } else {
                    ints(0, 0, 0, 0, 0, 0)
                }
            }
            return .init(kernel: try kernels.kernel(KernelLibrary.nnSqueezeExcite),
                         bindings: [buffer(input), buffer(output), .buffer(constants), .buffer(scratch),
                                    buffer(addend ?? input)],
                         push: push, groups: (bands.workgroups, 1, 1))

        case .pool(let input, let output, let filterH, let filterW, let strideY, let strideX, let padTop, let padLeft,
                   let average, let activation):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.height, a.width, a.groups, a.channels, o.height, o.width,
                 strideY, strideX, padTop, padLeft, filterH, filterW, average ? 1 : 0)
            push.int(activation.code)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnPool2d), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.pixels * o.groups))

        case .globalMean(let input, let output, let activation):
            let a = geometry(input)
            ints(offset(input), offset(output), a.pixels, a.groups, a.channels)
            push.int(activation.code)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnGlobalMean), bindings: [buffer(input), buffer(output)],
                         push: push, groups: (a.groups, 1, 1))

        case .pad(let input, let output, let top, let left, let front):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.height, a.width, a.channels, a.groups,
                 o.height, o.width, o.channels, o.groups, top, left, front)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnPad), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .reshape(let input, let output):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.width, a.channels, a.groups, o.height, o.width, o.channels, o.groups)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnReshape), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .place(let input, let output, let y0, let x0, let c0):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.height, a.width, a.channels, a.groups,
                 o.width, o.channels, o.groups, y0, x0, c0)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnPlace), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: a.vec4Count))

        case .depthToSpace(let input, let output, let block):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.width, a.groups, o.height, o.width, o.channels, o.groups, block)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnDepthToSpace), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .resizeBilinear(let input, let output, let resize):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.height, a.width, a.groups, o.height, o.width)
            push.float(resize.scaleY)
            push.float(resize.scaleX)
            push.float(resize.centreOffset)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnResizeBilinear), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .unpack(let input, let index, let depthToSpace):
            // With a folded DEPTH_TO_SPACE: its output's layout, read from its source.
            let o = geometry(depthToSpace?.output ?? input), source = depthToSpace?.source ?? input
            ints(offset(source), 0, o.pixels, o.channels, geometry(source).groups, depthToSpace?.block ?? 1,
                 o.width, geometry(source).width)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnUnpack),
                         bindings: [buffer(source), .buffer(outputs[index].buffer)],
                         push: push, groups: Self.groups(covering: o.pixels * o.channels))
        }
    }

    /// The dense output's channels and width, those of a tensor of `channels` and `width`
    /// through the output's DEPTH_TO_SPACE.
    private func pushDenseOutput(_ output: NNDenseOutput, channels: Int, width: Int, into push: inout PushConstants) {
        push.int(Int32(channels / (output.block * output.block)))
        push.int(Int32(width * output.block))
    }

    /// A tensor's binding: its own buffer (a graph input), or exactly its range of the arena.
    private func binding(for tensor: Int) -> GPUBinding {
        let place = location(tensor)
        guard place.buffer === arena else { return .buffer(place.buffer) }
        return .bufferRange(arena, offset: place.vec4Offset * 16, size: max(place.vec4Count, 1) * 16)
    }

    /// The residual's offset and channel groups (-1: none) and the two activations of
    /// nn_conv_epilogue.glsl, with the residual's binding (the constants, unread, if none).
    private func pushEpilogue(_ epilogue: NNEpilogue, into push: inout PushConstants, bindings: inout [GPUBinding]) {
        if let residual = epilogue.residual {
            push.int(0) // bound as its own range
            push.int(Int32(geometry(residual).groups))
            bindings.append(binding(for: residual))
        } else {
            push.int(0)
            push.int(-1)
            bindings.append(.buffer(constants))
        }
        for activation in [epilogue.act1, epilogue.act2] {
            push.int(activation.code)
            push.int(activation.alphaOffset)
        }
    }

    /// The fields of nn_conv_epilogue.glsl that say how the residual is read: a fused
    /// skip-path max-pool's window (or -1: a fused bilinear resize), the size of the tensor
    /// pooled or resized, and the resize's scales.
    private func pushResidualSource(_ epilogue: NNEpilogue, into push: inout PushConstants) {
        let source = epilogue.residual.map(geometry)
        push.int(Int32(epilogue.residualResize == nil ? epilogue.residualPool : -1))
        push.int(Int32(source?.height ?? 0))
        push.int(Int32(source?.width ?? 0))
        let resize = epilogue.residualResize ?? NNResize(scaleY: 0, scaleX: 0, centreOffset: 0)
        push.float(resize.scaleY)
        push.float(resize.scaleX)
        push.float(resize.centreOffset)
    }
}
