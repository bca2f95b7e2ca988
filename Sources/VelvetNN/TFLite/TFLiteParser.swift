/// Schema-directed walk over the flatbuffer (field ids from TFLite's schema.fbs).
struct TFLiteParser {
    struct Graph {
        var version: Int
        var description: String?
        var subgraphCount: Int
        var tensors: [TFLiteTensor]
        var operators: [TFLiteOperator]
        var inputs: [Int]
        var outputs: [Int]
    }

    struct OperatorCode {
        var kind: TFLiteOpKind
        var version: Int
    }

    static let supportedSchemaVersion = 3
    static let maxRank = 16
    /// Largest element count of one tensor; keeps shape products far from overflow.
    static let maxElements = Int(Int32.max)

    let reader: FlatBufferReader
    /// Elements still allowed to be decoded. Flatbuffers may share a vector
    /// between many tables; without this cap a crafted file could make the
    /// decoded model quadratically larger than the file.
    private var budget: Int
    private let decodeLimit: Int

    init(reader: FlatBufferReader) {
        self.reader = reader
        decodeLimit = 4 * reader.count + 65_536
        budget = decodeLimit
    }

    private mutating func charge(_ elements: Int, _ what: @autoclosure () -> String) throws(TFLiteError) {
        budget -= elements
        guard budget >= 0 else {
            throw .malformed("\(what()) pushes the decoded size past \(decodeLimit) elements; the file is corrupt")
        }
    }

    mutating func parse() throws(TFLiteError) -> Graph {
        guard reader.count > 0 else { throw TFLiteError(.notTFLite("file is empty")) }
        guard reader.count >= 8, reader.fileIdentifier == "TFL3" else {
            throw TFLiteError(.notTFLite("missing TFL3 identifier"))
        }
        let model = try reader.rootTable()
        let version = Int(try model.scalar(0, default: UInt32(0)))
        guard version == Self.supportedSchemaVersion else {
            throw .unsupported("schema version \(version); only version 3 is supported")
        }
        let description = try model.string(3, what: "model description")
        let codes = try operatorCodes(model)
        let buffers = try buffers(model)

        guard let subgraphs = try model.vector(2, elementSize: 4, what: "subgraphs"), !subgraphs.isEmpty else {
            throw .malformed("model has no subgraphs")
        }
        let subgraph = try subgraphs.table(at: 0, what: "subgraph 0")
        let tensors = try tensors(subgraph, buffers: buffers)
        let inputs = try tensorIndices(subgraph, 1, what: "graph inputs", count: tensors.count, allowAbsent: false)
        let outputs = try tensorIndices(subgraph, 2, what: "graph outputs", count: tensors.count, allowAbsent: false)
        let operators = try operators(subgraph, codes: codes, tensorCount: tensors.count)
        return Graph(version: version, description: description, subgraphCount: subgraphs.count,
                     tensors: tensors, operators: operators, inputs: inputs, outputs: outputs)
    }

    // MARK: Operator codes

    private mutating func operatorCodes(_ model: FlatTable) throws(TFLiteError) -> [OperatorCode] {
        guard let vector = try model.vector(1, elementSize: 4, what: "operator codes") else { return [] }
        try charge(vector.count, "operator code list")
        var codes: [OperatorCode] = []
        codes.reserveCapacity(vector.count)
        for i in 0..<vector.count {
            let t = try vector.table(at: i, what: "operator code \(i)")
            // Old files only set the int8 field; new ones set both and clamp
            // the int8 one at 127 (PLACEHOLDER_FOR_GREATER_OP_CODES).
            let deprecated = Int32(try t.scalar(0, default: Int8(0)))
            let extended = try t.scalar(3, default: Int32(0))
            let code = max(deprecated, extended)
            let version = Int(try t.scalar(2, default: Int32(1)))
            let kind: TFLiteOpKind
            if code == TFLiteBuiltinOperator.custom.rawValue {
                guard let name = try t.string(1, what: "custom code of operator code \(i)") else {
                    throw .malformed("operator code \(i) is CUSTOM but has no custom name")
                }
                try charge(name.utf8.count, "custom op name")
                kind = .custom(name)
            } else if code < 0 {
                throw .malformed("operator code \(i) has negative builtin code \(code)")
            } else if let op = TFLiteBuiltinOperator(rawValue: code) {
                kind = .builtin(op)
            } else {
                kind = .unknownBuiltin(code)
            }
            codes.append(OperatorCode(kind: kind, version: version))
        }
        return codes
    }

    // MARK: Buffers

    private mutating func buffers(_ model: FlatTable) throws(TFLiteError) -> [ArraySlice<UInt8>?] {
        guard let vector = try model.vector(4, elementSize: 4, what: "buffers") else { return [] }
        try charge(vector.count, "buffer list")
        var result: [ArraySlice<UInt8>?] = []
        result.reserveCapacity(vector.count)
        for i in 0..<vector.count {
            let t = try vector.table(at: i, what: "buffer \(i)")
            // Models over 2 GB keep data outside the flatbuffer at (offset, size).
            let offset = try t.scalar(1, default: UInt64(0))
            if offset > 1 {
                let size = try t.scalar(2, default: UInt64(0))
                guard offset <= UInt64(reader.count), size <= UInt64(reader.count) - offset else {
                    throw .truncated("buffer \(i) data at offset \(offset) (\(size) bytes) extends past end (size \(reader.count))")
                }
                result.append(reader.bytes[Int(offset)..<Int(offset + size)])
            } else if let data = try t.vector(0, elementSize: 1, what: "data of buffer \(i)"), !data.isEmpty {
                result.append(data.bytes)
            } else {
                result.append(nil)
            }
        }
        return result
    }

    // MARK: Tensors

    private mutating func tensors(_ subgraph: FlatTable, buffers: [ArraySlice<UInt8>?]) throws(TFLiteError) -> [TFLiteTensor] {
        guard let vector = try subgraph.vector(0, elementSize: 4, what: "tensors") else { return [] }
        try charge(vector.count, "tensor list")
        var tensors: [TFLiteTensor] = []
        tensors.reserveCapacity(vector.count)
        for i in 0..<vector.count {
            tensors.append(try tensor(i, try vector.table(at: i, what: "tensor \(i)"), buffers: buffers))
        }
        return tensors
    }

    private mutating func tensor(_ index: Int, _ t: FlatTable, buffers: [ArraySlice<UInt8>?]) throws(TFLiteError) -> TFLiteTensor {
        let name = try t.string(3, what: "name of tensor \(index)") ?? ""
        try charge(name.utf8.count, "name of tensor \(index)")
        let label = name.isEmpty ? "tensor \(index)" : "tensor \(index) '\(name)'"

        // An absent shape is a scalar.
        var shape: [Int] = []
        if let shapeVector = try t.vector(0, elementSize: 4, what: "shape of \(label)") {
            guard shapeVector.count <= Self.maxRank else {
                throw .unsupported("\(label) has rank \(shapeVector.count); at most \(Self.maxRank) is supported")
            }
            try charge(shapeVector.count, "shape of \(label)")
            shape = shapeVector.int32s.map(Int.init)
        }
        var elements = 1
        for dim in shape {
            guard dim >= 0 else { throw .malformed("\(label) has negative dimension in shape \(shape)") }
            let (product, overflow) = elements.multipliedReportingOverflow(by: dim)
            guard !overflow, product <= Self.maxElements else {
                throw .unsupported("\(label) with shape \(shape) has more than \(Self.maxElements) elements")
            }
            elements = product
        }

        let rawType = try t.scalar(1, default: Int8(0))
        guard let type = TFLiteTensorType(rawValue: rawType) else {
            throw .malformed("\(label) has unknown element type \(rawType)")
        }

        let bufferIndex = Int(try t.scalar(2, default: UInt32(0)))
        guard bufferIndex == 0 || bufferIndex < buffers.count else {
            throw .malformed("\(label) refers to buffer \(bufferIndex) but the model has \(buffers.count) buffers")
        }
        let data = bufferIndex < buffers.count ? buffers[bufferIndex] : nil

        var sparsity: TFLiteSparsity?
        if let s = try t.table(6, what: "sparsity of \(label)") {
            sparsity = try self.sparsity(s, label: label)
        }

        if let data, let size = type.byteSize {
            if sparsity == nil {
                guard data.count == elements * size else {
                    throw .malformed("\(label) has \(data.count) bytes of data but shape \(shape) of \(type) needs \(elements * size)")
                }
            } else if data.count % size != 0 {
                throw .malformed("sparse \(label) has \(data.count) bytes of data, not a whole number of \(type) values")
            }
        }

        return TFLiteTensor(index: index, name: name, shape: shape, type: type, bufferIndex: bufferIndex,
                            data: data, sparsity: sparsity, isVariable: try t.bool(5))
    }

    private mutating func sparsity(_ t: FlatTable, label: String) throws(TFLiteError) -> TFLiteSparsity {
        let order = try t.intVector(0, what: "traversal order of \(label)")
        let blockMap = try t.intVector(1, what: "block map of \(label)")
        try charge(order.count + blockMap.count, "sparsity of \(label)")
        var dimensions: [TFLiteSparsity.Dimension] = []
        if let vector = try t.vector(2, elementSize: 4, what: "dim metadata of \(label)") {
            guard vector.count <= 2 * Self.maxRank else {
                throw .malformed("\(label) has \(vector.count) sparse dimensions")
            }
            for i in 0..<vector.count {
                let d = try vector.table(at: i, what: "dim metadata \(i) of \(label)")
                let rawFormat = try d.scalar(0, default: Int8(0))
                guard let format = TFLiteSparsity.Format(rawValue: rawFormat) else {
                    throw .malformed("dimension \(i) of \(label) has unknown sparse format \(rawFormat)")
                }
                let segments = try indexVector(d, 2, what: "array_segments of dimension \(i) of \(label)")
                let indices = try indexVector(d, 4, what: "array_indices of dimension \(i) of \(label)")
                dimensions.append(.init(format: format, denseSize: Int(try d.scalar(1, default: Int32(0))),
                                        arraySegments: segments, arrayIndices: indices))
            }
        }
        return TFLiteSparsity(traversalOrder: order, blockMap: blockMap, dimensions: dimensions)
    }

    /// A SparseIndexVector union: Int32Vector (1), Uint16Vector (2) or Uint8Vector (3),
    /// each a table whose field 0 holds the values.
    private mutating func indexVector(_ t: FlatTable, _ id: Int, what: String) throws(TFLiteError) -> [Int] {
        guard let (type, table) = try t.union(id, what: what) else { return [] }
        let elementSize: Int
        switch type {
        case 1: elementSize = 4
        case 2: elementSize = 2
        case 3: elementSize = 1
        default: throw .malformed("\(what) has unknown index vector type \(type)")
        }
        guard let values = try table.vector(0, elementSize: elementSize, what: what) else { return [] }
        try charge(values.count, what)
        switch elementSize {
        case 4: return values.elements(Int32.self).map(Int.init)
        case 2: return values.elements(UInt16.self).map(Int.init)
        default: return values.bytes.map(Int.init)
        }
    }

    // MARK: Operators

    private mutating func tensorIndices(_ t: FlatTable, _ id: Int, what: String, count: Int,
                                        allowAbsent: Bool) throws(TFLiteError) -> [Int] {
        let indices = try t.intVector(id, what: what)
        try charge(indices.count, what)
        for index in indices where !(index >= 0 && index < count) && !(allowAbsent && index == -1) {
            throw .malformed("\(what) refer to tensor \(index) but the graph has \(count) tensors")
        }
        return indices
    }

    private mutating func operators(_ subgraph: FlatTable, codes: [OperatorCode],
                                    tensorCount: Int) throws(TFLiteError) -> [TFLiteOperator] {
        guard let vector = try subgraph.vector(3, elementSize: 4, what: "operators") else { return [] }
        try charge(vector.count, "operator list")
        var operators: [TFLiteOperator] = []
        operators.reserveCapacity(vector.count)
        for i in 0..<vector.count {
            let t = try vector.table(at: i, what: "operator \(i)")
            let codeIndex = Int(try t.scalar(0, default: UInt32(0)))
            guard codeIndex < codes.count else {
                throw .malformed("operator \(i) uses operator code \(codeIndex) but the model has \(codes.count)")
            }
            let code = codes[codeIndex]
            let label = "operator \(i) (\(code.kind))"
            let inputs = try tensorIndices(t, 1, what: "inputs of \(label)", count: tensorCount, allowAbsent: true)
            let outputs = try tensorIndices(t, 2, what: "outputs of \(label)", count: tensorCount, allowAbsent: true)

            var options = TFLiteOptions.none
            if let (type, table) = try t.union(3, what: "options of \(label)") {
                options = try TFLiteOptionsDecoder.decode(type: type, table: table)
                if case .reshape(let newShape) = options { try charge(newShape.count, "options of \(label)") }
            }
            let custom = try customOptions(t, label: label)
            operators.append(TFLiteOperator(index: i, kind: code.kind, version: code.version, inputs: inputs,
                                            outputs: outputs, options: options, customOptions: custom))
        }
        return operators
    }

    private mutating func customOptions(_ t: FlatTable, label: String) throws(TFLiteError) -> [UInt8]? {
        // Models over 2 GB keep custom options outside the flatbuffer.
        let offset = try t.scalar(9, default: UInt64(0))
        if offset > 1 {
            let size = try t.scalar(10, default: UInt64(0))
            guard offset <= UInt64(reader.count), size <= UInt64(reader.count) - offset else {
                throw .truncated("custom options of \(label) at offset \(offset) (\(size) bytes) extend past end (size \(reader.count))")
            }
            try charge(Int(size), "custom options of \(label)")
            return Array(reader.bytes[Int(offset)..<Int(offset + size)])
        }
        guard let vector = try t.vector(5, elementSize: 1, what: "custom options of \(label)") else { return nil }
        try charge(vector.count, "custom options of \(label)")
        return Array(vector.bytes)
    }
}
