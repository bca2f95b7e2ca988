/// Expands a sparse constant (TFLite's TACO-style SparsityParameters) into a
/// dense row-major byte array, checking every segment, index and value position.
struct SparseDensifier {
    /// Dense outputs larger than this are refused: a forged shape must not
    /// make the loader allocate gigabytes.
    static let maxDenseElements = 1 << 26

    private let levels: [TFLiteSparsity.Dimension]
    /// For each level, the dimension it traverses (an original or a block dimension).
    private let order: [Int]
    /// For each level, how many coordinates it has.
    private let levelSizes: [Int]
    private let rank: Int
    private let blockSizes: [Int]
    /// For each original dimension, the block dimension subdividing it, or -1.
    private let blockOf: [Int]
    private let strides: [Int]
    private let values: ArraySlice<UInt8>
    private let valueCount: Int
    private let elementSize: Int
    private let label: String

    private var coordinates: [Int]
    private var output: [UInt8]

    /// The tensor's dense bytes (same element type as the stored values).
    static func densify(_ tensor: TFLiteTensor) throws(TFLiteError) -> [UInt8] {
        var densifier = try SparseDensifier(tensor)
        try densifier.visit(level: 0, position: 0)
        return densifier.output
    }

    private init(_ tensor: TFLiteTensor) throws(TFLiteError) {
        label = tensor.name.isEmpty ? "tensor \(tensor.index)" : "tensor \(tensor.index) '\(tensor.name)'"
        guard let sparsity = tensor.sparsity, let data = tensor.data else {
            throw .malformed("\(label) is not a sparse constant")
        }
        guard let size = tensor.type.byteSize else {
            throw .unsupported("sparse \(label) has element type \(tensor.type)")
        }
        let shape = tensor.shape
        let elements = tensor.elementCount
        guard elements <= Self.maxDenseElements else {
            throw .unsupported("sparse \(label) densifies to \(elements) elements (limit \(Self.maxDenseElements))")
        }
        // Locals first: closures below must not capture a half-initialized self.
        let rank = shape.count, blockMap = sparsity.blockMap
        let order = sparsity.traversalOrder, levels = sparsity.dimensions
        self.rank = rank
        self.order = order
        self.levels = levels
        let levelCount = rank + blockMap.count
        guard order.count == levelCount, levels.count == levelCount else {
            throw .malformed("sparse \(label): traversal order has \(order.count) and dim metadata \(levels.count) entries, expected \(levelCount)")
        }
        guard Set(order) == Set(0..<levelCount), Set(order.prefix(rank)) == Set(0..<rank) else {
            throw .malformed("sparse \(label): traversal order \(order) is not a valid permutation")
        }
        guard blockMap.allSatisfy({ $0 >= 0 && $0 < rank }), Set(blockMap).count == blockMap.count else {
            throw .malformed("sparse \(label): block map \(blockMap) is invalid for rank \(rank)")
        }

        // Block sizes come from the dense levels that traverse block dimensions.
        var blockSizes = [Int](repeating: 0, count: blockMap.count)
        for (level, dim) in order.enumerated() where dim >= rank {
            let meta = levels[level]
            guard meta.format == .dense, meta.denseSize > 0 else {
                throw .malformed("sparse \(label): block dimension \(dim) must be dense with a positive size")
            }
            blockSizes[dim - rank] = meta.denseSize
        }
        var blockedSizes = shape
        for (j, dim) in blockMap.enumerated() {
            guard shape[dim] % blockSizes[j] == 0 else {
                throw .malformed("sparse \(label): block size \(blockSizes[j]) does not divide dimension \(dim) of \(shape)")
            }
            blockedSizes[dim] = shape[dim] / blockSizes[j]
        }
        let sizes = order.map { $0 < rank ? blockedSizes[$0] : blockSizes[$0 - rank] }
        for (level, meta) in levels.enumerated() where meta.format == .dense {
            guard meta.denseSize == sizes[level] else {
                throw .malformed("sparse \(label): dense level \(level) has size \(meta.denseSize), expected \(sizes[level])")
            }
        }
        levelSizes = sizes
        self.blockSizes = blockSizes
        var blockOf = [Int](repeating: -1, count: rank)
        for (j, dim) in blockMap.enumerated() { blockOf[dim] = j }
        self.blockOf = blockOf

        var strides = [Int](repeating: 1, count: rank)
        for d in stride(from: rank - 2, through: 0, by: -1) { strides[d] = strides[d + 1] * shape[d + 1] }
        self.strides = strides
        values = data
        elementSize = size
        valueCount = data.count / size
        coordinates = [Int](repeating: 0, count: levelCount)
        output = [UInt8](repeating: 0, count: elements * size)
    }

    /// Walks level `level` below storage position `position` of the previous level.
    private mutating func visit(level: Int, position: Int) throws(TFLiteError) {
        guard level < levels.count else { return try emit(valuePosition: position) }
        let dim = order[level]
        let meta = levels[level]
        switch meta.format {
        case .dense:
            for i in 0..<meta.denseSize {
                coordinates[dim] = i
                try visit(level: level + 1, position: position * meta.denseSize + i)
            }
        case .sparseCSR:
            let segments = meta.arraySegments, indices = meta.arrayIndices
            guard position + 1 < segments.count else {
                throw .malformed("sparse \(label): level \(level) has \(segments.count) segments, needs more than \(position + 1)")
            }
            let start = segments[position], end = segments[position + 1]
            guard start >= 0, start <= end, end <= indices.count else {
                throw .malformed("sparse \(label): level \(level) segment \(position) is [\(start), \(end)) of \(indices.count) indices")
            }
            let size = levelSizes[level], isLast = level + 1 == levels.count
            for j in start..<end {
                let coordinate = indices[j]
                guard coordinate >= 0, coordinate < size else {
                    throw .malformed("sparse \(label): level \(level) index \(coordinate) is outside 0..<\(size)")
                }
                coordinates[dim] = coordinate
                // The common CSR-innermost case emits directly instead of recursing.
                if isLast { try emit(valuePosition: j) } else { try visit(level: level + 1, position: j) }
            }
        }
    }

    /// Copies stored value `valuePosition` to the dense position of the current coordinates.
    private mutating func emit(valuePosition: Int) throws(TFLiteError) {
        guard valuePosition < valueCount else {
            throw .malformed("sparse \(label): value \(valuePosition) requested but only \(valueCount) are stored")
        }
        var linear = 0
        for d in 0..<rank {
            var coordinate = coordinates[d]
            let block = blockOf[d]
            if block >= 0 { coordinate = coordinate * blockSizes[block] + coordinates[rank + block] }
            linear += coordinate * strides[d]
        }
        let source = values.startIndex + valuePosition * elementSize
        let target = linear * elementSize
        for b in 0..<elementSize { output[target + b] = values[source + b] }
    }
}
