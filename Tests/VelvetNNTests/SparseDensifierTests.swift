import XCTest
@testable import VelvetNN

final class SparseDensifierTests: XCTestCase {
    private func sparseTensor(shape: [Int], order: [Int], blockMap: [Int] = [],
                              dims: [TFLiteSparsity.Dimension], values: [Int32]) -> TFLiteTensor {
        let bytes = values.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        return TFLiteTensor(index: 0, name: "w", shape: shape, type: .int32, bufferIndex: 1,
                            data: bytes[...], sparsity: TFLiteSparsity(traversalOrder: order, blockMap: blockMap,
                                                                       dimensions: dims),
                            isVariable: false)
    }

    private func dense(_ size: Int) -> TFLiteSparsity.Dimension {
        .init(format: .dense, denseSize: size, arraySegments: [], arrayIndices: [])
    }

    private func csr(_ segments: [Int], _ indices: [Int]) -> TFLiteSparsity.Dimension {
        .init(format: .sparseCSR, denseSize: 0, arraySegments: segments, arrayIndices: indices)
    }

    private func int32s(_ bytes: [UInt8]) -> [Int32] {
        stride(from: 0, to: bytes.count, by: 4).map { i in
            (0..<4).reduce(Int32(0)) { $0 | Int32(bytes[i + $1]) << (8 * $1) }
        }
    }

    /// [[1, 0, 2], [0, 0, 3]] stored as dense rows with CSR columns.
    func testCSRMatrix() throws {
        let t = sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2), csr([0, 2, 3], [0, 2, 2])], values: [1, 2, 3])
        XCTAssertEqual(int32s(try SparseDensifier.densify(t)), [1, 0, 2, 0, 0, 3])
    }

    /// Column-major traversal: order (1, 0).
    func testTraversalOrder() throws {
        // Dense [[1, 0], [2, 3]]; columns first: column 0 has rows 0,1; column 1 has row 1.
        let t = sparseTensor(shape: [2, 2], order: [1, 0], dims: [dense(2), csr([0, 2, 3], [0, 1, 1])], values: [1, 2, 3])
        XCTAssertEqual(int32s(try SparseDensifier.densify(t)), [1, 0, 2, 3])
    }

    /// 4x4 with 2x2 blocks; only the top-left and bottom-right blocks are stored.
    func testBlockSparse() throws {
        let t = sparseTensor(shape: [4, 4], order: [0, 1, 2, 3], blockMap: [0, 1],
                             dims: [dense(2), csr([0, 1, 2], [0, 1]), dense(2), dense(2)],
                             values: [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(int32s(try SparseDensifier.densify(t)),
                       [1, 2, 0, 0,
                        3, 4, 0, 0,
                        0, 0, 5, 6,
                        0, 0, 7, 8])
    }

    func testBadMetadataThrows() {
        let cases: [(String, TFLiteTensor)] = [
            ("index past dimension", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2), csr([0, 1, 2], [0, 3])], values: [1, 2])),
            ("segments decreasing", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2), csr([0, 2, 1], [0, 1])], values: [1, 2])),
            ("too few segments", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2), csr([0, 1], [0])], values: [1])),
            ("segment past indices", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2), csr([0, 1, 9], [0])], values: [1])),
            ("too few values", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2), csr([0, 1, 2], [0, 1])], values: [1])),
            ("wrong dense size", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(5), csr([0, 1, 2], [0, 1])], values: [1, 2])),
            ("not a permutation", sparseTensor(shape: [2, 3], order: [0, 0], dims: [dense(2), csr([0, 1, 2], [0, 1])], values: [1, 2])),
            ("metadata count", sparseTensor(shape: [2, 3], order: [0, 1], dims: [dense(2)], values: [1, 2])),
            ("block does not divide", sparseTensor(shape: [3, 4], order: [0, 1, 2], blockMap: [0],
                                                   dims: [dense(1), dense(4), dense(2)], values: [1])),
        ]
        for (label, tensor) in cases {
            XCTAssertThrowsError(try SparseDensifier.densify(tensor), label) { error in
                guard case .malformed = (error as? TFLiteError)?.reason else { return XCTFail("\(label): \(error)") }
            }
        }
    }
}
