import Foundation

/// A parsed TFLite model: subgraph 0's tensors and operators, validated so
/// that every index in it is in range and every constant's size matches its
/// shape. Parsing never traps on bad input; it throws `TFLiteError`.
public struct TFLiteModel: Sendable {
    /// The file the model came from, where known.
    public let path: String?
    /// Size of the model's bytes; bounds how much load-time folding may produce.
    public let byteCount: Int
    public let schemaVersion: Int
    public let description: String?
    public let subgraphCount: Int
    public let tensors: [TFLiteTensor]
    public let operators: [TFLiteOperator]
    /// Graph input / output tensor indices.
    public let inputs: [Int]
    public let outputs: [Int]

    public init(contentsOf url: URL) throws(TFLiteError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TFLiteError(.unreadable(Self.ioMessage(error)), path: url.path)
        }
        try self.init(data: data, path: url.path)
    }

    public init(data: Data, path: String? = nil) throws(TFLiteError) {
        try self.init(bytes: [UInt8](data), path: path)
    }

    public init(bytes: [UInt8], path: String? = nil) throws(TFLiteError) {
        do {
            var parser = TFLiteParser(reader: FlatBufferReader(bytes: bytes))
            let graph = try parser.parse()
            self.path = path
            byteCount = bytes.count
            schemaVersion = graph.version
            description = graph.description
            subgraphCount = graph.subgraphCount
            tensors = graph.tensors
            operators = graph.operators
            inputs = graph.inputs
            outputs = graph.outputs
        } catch {
            throw error.at(path: path)
        }
    }

    public var inputTensors: [TFLiteTensor] { inputs.map { tensors[$0] } }
    public var outputTensors: [TFLiteTensor] { outputs.map { tensors[$0] } }

    public func tensor(named name: String) -> TFLiteTensor? {
        tensors.first { $0.name == name }
    }

    /// How many operators of each kind the graph has.
    public var operatorCounts: [TFLiteOpKind: Int] {
        operators.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 }
    }

    private static func ioMessage(_ error: Error) -> String {
        let ns = error as NSError
        if ns.domain == NSCocoaErrorDomain, ns.code == NSFileReadNoSuchFileError {
            return "no such file"
        }
        return ns.localizedDescription
    }
}
