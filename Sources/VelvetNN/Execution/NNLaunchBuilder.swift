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
    /// Buffer and vec4 offset of a tensor's packed data.
    let location: (Int) -> (GPUBuffer, Int32)
    let outputs: [NNTensor]

    static let workgroupSize = 64

    private func geometry(_ tensor: Int) -> NNTensorGeometry { NNTensorGeometry(shape: graph.tensors[tensor].shape) }

    /// Workgroups for `invocations` in a 1D launch; past 65535 groups the rest go to y.
    static func groups(covering invocations: Int) -> (x: Int, y: Int, z: Int) {
        let groups = max((invocations + workgroupSize - 1) / workgroupSize, 1)
        let x = min(groups, 65535)
        return (x, (groups + x - 1) / x, 1)
    }

    func launch(for step: NNStep) throws -> NNModelPlan.Launch {
        var push = PushConstants()
        func ints(_ values: Int...) { for v in values { push.int(Int32(v)) } }
        func offset(_ tensor: Int) -> Int { Int(location(tensor).1) }
        func buffer(_ tensor: Int) -> GPUBinding { .buffer(location(tensor).0) }

        switch step {
        case .conv(let c), .depthwise(let c), .transposeConv(let c):
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
                if let residual = c.epilogue.residual {
                    ints(offset(residual), geometry(residual).groups)
                    bindings.append(buffer(residual))
                } else {
                    ints(0, -1)
                    bindings.append(.buffer(arena))
                }
                push.int(c.epilogue.act1.code)
                push.int(c.epilogue.act1.alphaOffset)
                push.int(c.epilogue.act2.code)
                push.int(c.epilogue.act2.alphaOffset)
                if case .conv = step {
                    // A fused skip-path max-pool: its window and the size of the tensor it pools.
                    let source = c.epilogue.residual.map(geometry)
                    ints(c.epilogue.residualPool, source?.height ?? 0, source?.width ?? 0)
                }
                if case .depthwise = step {
                    kernel = try kernels.kernel(KernelLibrary.nnDepthwiseConv2d,
                                                ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW)])
                } else if Self.splitsInputChannels(kernelH: c.kernelH, kernelW: c.kernelW, outputs: o.pixels * o.groups,
                                                   inputGroups: a.groups) {
                    // 8 invocations per output group (nn_conv1x1_split.comp).
                    invocations = o.pixels * o.groups * 8
                    kernel = try kernels.kernel(KernelLibrary.nnConv1x1Split)
                } else {
                    let perInvocation = Self.outputGroupsPerInvocation(pixels: o.pixels, groups: o.groups)
                    invocations = o.pixels * (o.groups / perInvocation)
                    kernel = try kernels.kernel(KernelLibrary.nnConv2d, ["KH": Int32(c.kernelH), "KW": Int32(c.kernelW),
                                                                         "OCB": Int32(perInvocation)])
                }
            }
            return .init(kernel: kernel, bindings: bindings, push: push, groups: Self.groups(covering: invocations))

        case .elementwise(let input, let output, let op, let operand, let activation):
            let o = geometry(output)
            var operandBinding: GPUBinding = .buffer(arena)
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
            return .init(kernel: try kernels.kernel(KernelLibrary.nnElementwise),
                         bindings: [buffer(input), buffer(output), .buffer(constants), operandBinding],
                         push: push, groups: Self.groups(covering: o.pixels * o.groups))

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

        case .resizeBilinear(let input, let output, let scaleY, let scaleX, let centreOffset):
            let a = geometry(input), o = geometry(output)
            ints(offset(input), offset(output), a.height, a.width, a.groups, o.height, o.width)
            push.float(scaleY)
            push.float(scaleX)
            push.float(centreOffset)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnResizeBilinear), bindings: [buffer(input), buffer(output)],
                         push: push, groups: Self.groups(covering: o.vec4Count))

        case .unpack(let input, let index):
            let a = geometry(input)
            ints(offset(input), 0, a.pixels, a.channels, a.groups)
            return .init(kernel: try kernels.kernel(KernelLibrary.nnUnpack),
                         bindings: [buffer(input), .buffer(outputs[index].buffer)],
                         push: push, groups: Self.groups(covering: a.pixels * a.channels))
        }
    }

    /// Output channel groups one conv invocation computes: more reuse of each input
    /// load, while keeping at least ~2k invocations to fill the device.
    /// A 1x1 convolution with few outputs and a long reduction shares each output among 8
    /// invocations: below `splitBelow` output groups the GPU is far from full, and each
    /// invocation of the plain kernel would loop over 8 or more input groups alone.
    static func splitsInputChannels(kernelH: Int, kernelW: Int, outputs: Int, inputGroups: Int) -> Bool {
        kernelH == 1 && kernelW == 1 && outputs < splitBelow && inputGroups >= 8
    }

    /// 32768 output groups (the fastest of 0, 4096, ..., 32768 on the H200: docs/PERFORMANCE.md),
    /// or `VELVET_NN_SPLIT_BELOW` (for tuning on another GPU with `velvet bench nn`; 0 turns
    /// the split kernel off).
    static let splitBelow: Int = {
        ProcessInfo.processInfo.environment["VELVET_NN_SPLIT_BELOW"].flatMap { Int($0) } ?? 32768
    }()

    static func outputGroupsPerInvocation(pixels: Int, groups: Int) -> Int {
        for candidate in [4, 2] where groups % candidate == 0 && pixels * groups / candidate >= 2048 {
            return candidate
        }
        return 1
    }
}
