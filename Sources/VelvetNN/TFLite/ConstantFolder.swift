/// Walks the operators once, folding constant DENSIFY / DEQUANTIZE and
/// checking that every runtime tensor is written before it is read.
struct ConstantFolder {
    let model: TFLiteModel
    var nodes: [TFLiteGraph.Node] = []
    var foldedCount = 0
    /// Constants produced by folding, by output tensor index.
    private var folded: [Int: TFLiteConstant] = [:]
    /// Constants referenced by the remaining nodes.
    var used: [Int: TFLiteConstant] = [:]
    /// Runtime tensors available so far.
    private var written: Set<Int>
    /// Constant values still allowed to be materialized. Tensors may share a
    /// buffer and sparse tensors expand, so without a cap a small crafted file
    /// could make folding allocate without bound.
    private var budget: Int
    private let initialBudget: Int

    init(model: TFLiteModel) {
        self.model = model
        written = Set(model.inputs)
        initialBudget = 2 * model.byteCount + SparseDensifier.maxDenseElements
        budget = initialBudget
    }

    private mutating func charge(_ elements: Int, for index: Int) throws(TFLiteError) {
        budget -= elements
        guard budget >= 0 else {
            throw .unsupported("constants expand to more than \(initialBudget) values at \(name(index)); the model is too large or corrupt")
        }
    }

    mutating func run() throws(TFLiteError) {
        for op in model.operators {
            if try fold(op) { foldedCount += 1; continue }
            var operands: [TFLiteGraph.Operand] = []
            for index in op.inputs { operands.append(try operand(index, of: op)) }
            for index in op.outputs where index >= 0 {
                guard !written.contains(index), !isConstant(index) else {
                    throw .malformed("\(label(op)) writes \(name(index)), which is already a graph input, constant or earlier output")
                }
                written.insert(index)
            }
            nodes.append(.init(op: op, inputs: operands, outputs: op.outputs))
        }
        for index in model.outputs where !written.contains(index) {
            guard isConstant(index) else {
                throw .malformed("graph output \(name(index)) is never written by any operator")
            }
            used[index] = try constant(index)
        }
    }

    /// Folds a DENSIFY or DEQUANTIZE whose input is constant; false when `op` must run.
    private mutating func fold(_ op: TFLiteOperator) throws(TFLiteError) -> Bool {
        guard let builtin = op.builtin, builtin == .densify || builtin == .dequantize,
              op.inputs.count == 1, op.outputs.count == 1,
              op.inputs[0] >= 0, op.outputs[0] >= 0, isConstant(op.inputs[0]) else { return false }
        let input = op.inputs[0], output = op.outputs[0]
        let outTensor = model.tensors[output]
        guard !written.contains(output), folded[output] == nil, !model.tensors[output].isConstant else {
            throw .malformed("\(label(op)) writes \(name(output)), which is already a graph input, constant or earlier output")
        }
        try charge(outTensor.elementCount, for: output)
        let result: TFLiteConstant.Values
        if builtin == .densify {
            let inTensor = model.tensors[input]
            guard inTensor.sparsity != nil else {
                throw .malformed("\(label(op)) reads \(name(input)), which is not sparse")
            }
            guard inTensor.shape == outTensor.shape, inTensor.type == outTensor.type else {
                throw .malformed("\(label(op)) turns \(inTensor.type) \(inTensor.shape) into \(outTensor.type) \(outTensor.shape)")
            }
            result = try Self.values(type: inTensor.type, bytes: SparseDensifier.densify(inTensor))
        } else {
            let source = try constant(input)
            guard outTensor.type == .float32 else {
                throw .unsupported("\(label(op)) produces \(outTensor.type); only float32 outputs are supported")
            }
            let floats: [Float]
            switch source.values {
            case .float32(let v): floats = v
            case .raw(.float16, let bytes): floats = HalfFloat.floats(fromLittleEndian: bytes)
            default:
                throw .unsupported("\(label(op)) dequantizes a \(model.tensors[input].type) constant; only float16 is supported")
            }
            guard floats.count == outTensor.elementCount else {
                throw .malformed("\(label(op)) turns \(floats.count) values into \(outTensor.shape)")
            }
            result = .float32(floats)
        }
        folded[output] = TFLiteConstant(tensorIndex: output, name: outTensor.name, shape: outTensor.shape, values: result)
        return true
    }

    private mutating func operand(_ index: Int, of op: TFLiteOperator) throws(TFLiteError) -> TFLiteGraph.Operand {
        if index < 0 { return .absent }
        if isConstant(index) {
            if used[index] == nil { used[index] = try constant(index) }
            return .constant(index)
        }
        guard written.contains(index) else {
            throw .malformed("\(label(op)) reads \(name(index)) before any operator writes it")
        }
        return .runtime(index)
    }

    private func isConstant(_ index: Int) -> Bool {
        folded[index] != nil || model.tensors[index].isConstant
    }

    /// The constant value of a folded output or of a tensor with buffer data.
    private mutating func constant(_ index: Int) throws(TFLiteError) -> TFLiteConstant {
        if let c = folded[index] { return c }
        let tensor = model.tensors[index]
        try charge(tensor.elementCount, for: index)
        guard let data = tensor.data else {
            throw .malformed("\(name(index)) is not a constant")
        }
        guard tensor.sparsity == nil else {
            throw .unsupported("sparse \(name(index)) is used without a DENSIFY operator")
        }
        return TFLiteConstant(tensorIndex: index, name: tensor.name, shape: tensor.shape,
                              values: Self.values(type: tensor.type, bytes: data))
    }

    private static func values(type: TFLiteTensorType, bytes: ArraySlice<UInt8>) -> TFLiteConstant.Values {
        switch type {
        case .float32: return .float32(decode(bytes) { Float(bitPattern: UInt32(littleEndian: $0)) })
        case .int32: return .int32(decode(bytes) { Int32(littleEndian: $0) })
        case .int64: return .int64(decode(bytes) { Int64(littleEndian: $0) })
        default: return .raw(type, Array(bytes))
        }
    }

    private static func values(type: TFLiteTensorType, bytes: [UInt8]) -> TFLiteConstant.Values {
        values(type: type, bytes: bytes[...])
    }

    /// Reads whole little-endian `Word`s (a trailing partial word is ignored).
    private static func decode<Word: FixedWidthInteger, Value>(_ bytes: ArraySlice<UInt8>,
                                                              _ convert: (Word) -> Value) -> [Value] {
        let size = MemoryLayout<Word>.size
        return bytes.withUnsafeBytes { raw in
            (0..<raw.count / size).map { convert(raw.loadUnaligned(fromByteOffset: $0 * size, as: Word.self)) }
        }
    }

    private func name(_ index: Int) -> String {
        let n = model.tensors[index].name
        return n.isEmpty ? "tensor \(index)" : "tensor \(index) '\(n)'"
    }

    private func label(_ op: TFLiteOperator) -> String {
        "operator \(op.index) (\(op.kind))"
    }
}
