/// What the host needs to know about a compiled kernel, read from its SPIR-V:
/// descriptor bindings, the push-constant block (size and members), workgroup size and
/// specialisation constants.
/// The host builds descriptor layouts from this, so GLSL stays the one source of truth.
struct SPIRVReflection {
    enum BindingKind: String {
        case storageImage, sampledImage, combinedImageSampler, sampler, uniformBuffer, storageBuffer
        case uniformTexelBuffer, storageTexelBuffer
    }
    struct Binding { var set: UInt32; var binding: UInt32; var kind: BindingKind; var count: UInt32; var name: String }
    struct SpecConstant { var id: UInt32; var name: String }
    /// A 32-bit scalar type a push-constant member is made of.
    enum Scalar: String {
        case int32 = "Int32", uint32 = "UInt32", float = "Float"
        /// The matching `KernelPushMember.Scalar` case.
        var caseName: String { self == .float ? "float" : (self == .int32 ? "int32" : "uint32") }
    }
    /// One member of the push-constant block: its GLSL name, `components` scalars
    /// (1 for a scalar, 2...4 for a vector) and its byte offset as the SPIR-V decorates it.
    struct PushMember { var name: String; var scalar: Scalar; var components: Int; var offset: Int }

    var bindings: [Binding] = []
    var pushConstantSize = 0
    var pushMembers: [PushMember] = []
    var workgroupSize: (UInt32, UInt32, UInt32) = (1, 1, 1)
    var specConstants: [SpecConstant] = []

    private enum Op {
        static let name: UInt32 = 5, memberName: UInt32 = 6, executionMode: UInt32 = 16, typeInt: UInt32 = 21, typeFloat: UInt32 = 22
        static let typeVector: UInt32 = 23, typeMatrix: UInt32 = 24, typeImage: UInt32 = 25, typeSampler: UInt32 = 26
        static let typeSampledImage: UInt32 = 27, typeArray: UInt32 = 28, typeRuntimeArray: UInt32 = 29
        static let typeStruct: UInt32 = 30, typePointer: UInt32 = 32, constant: UInt32 = 43
        static let specConstantTrue: UInt32 = 48, specConstantFalse: UInt32 = 49, specConstant: UInt32 = 50
        static let variable: UInt32 = 59, decorate: UInt32 = 71, memberDecorate: UInt32 = 72
    }
    private enum Decoration {
        static let specId: UInt32 = 1, block: UInt32 = 2, bufferBlock: UInt32 = 3, arrayStride: UInt32 = 6
        static let matrixStride: UInt32 = 7, binding: UInt32 = 33, descriptorSet: UInt32 = 34, offset: UInt32 = 35
    }
    private enum StorageClass {
        static let uniformConstant: UInt32 = 0, uniform: UInt32 = 2, pushConstant: UInt32 = 9, storageBuffer: UInt32 = 12
    }

    private indirect enum TypeInfo {
        case scalar(bytes: Int)
        case vector(component: UInt32, count: Int)
        case matrix(column: UInt32, count: Int)
        case image(dimension: UInt32, sampled: UInt32)
        case sampler
        case sampledImage(image: UInt32)
        case array(element: UInt32, lengthID: UInt32)
        case runtimeArray(element: UInt32)
        case structure(members: [UInt32])
        case pointer(storageClass: UInt32, pointee: UInt32)
    }

    init(words: [UInt32]) throws {
        guard words.count > 5, words[0] == 0x0723_0203 else {
            throw KernelCompilerError(diagnostics: ["?:1: error: not a SPIR-V module"])
        }
        var names: [UInt32: String] = [:]
        var memberNames: [UInt32: [Int: String]] = [:]
        var scalars: [UInt32: Scalar] = [:]
        var types: [UInt32: TypeInfo] = [:]
        var constants: [UInt32: UInt32] = [:]
        var decorations: [UInt32: [UInt32: UInt32]] = [:]
        var memberOffsets: [UInt32: [Int: Int]] = [:]
        var variables: [(type: UInt32, id: UInt32, storageClass: UInt32)] = []
        var specConstantIDs: [UInt32] = []

        var position = 5
        while position < words.count {
            let wordCount = Int(words[position] >> 16), opcode = words[position] & 0xFFFF
            guard wordCount > 0, position + wordCount <= words.count else {
                throw KernelCompilerError(diagnostics: ["?:1: error: malformed SPIR-V instruction stream"])
            }
            let operands = Array(words[(position + 1)..<(position + wordCount)])
            position += wordCount
            switch opcode {
            case Op.name where operands.count >= 2: names[operands[0]] = Self.string(from: operands.dropFirst())
            case Op.memberName where operands.count >= 3:
                memberNames[operands[0], default: [:]][Int(operands[1])] = Self.string(from: operands.dropFirst(2))
            case Op.executionMode where operands.count >= 5 && operands[1] == 17:
                workgroupSize = (operands[2], operands[3], operands[4])
            case Op.typeInt, Op.typeFloat:
                types[operands[0]] = .scalar(bytes: Int(operands[1]) / 8)
                if operands[1] == 32 {
                    scalars[operands[0]] = opcode == Op.typeFloat ? .float : (operands.count >= 3 && operands[2] == 1 ? .int32 : .uint32)
                }
            case Op.typeVector: types[operands[0]] = .vector(component: operands[1], count: Int(operands[2]))
            case Op.typeMatrix: types[operands[0]] = .matrix(column: operands[1], count: Int(operands[2]))
            case Op.typeImage: types[operands[0]] = .image(dimension: operands[2], sampled: operands[6])
            case Op.typeSampler: types[operands[0]] = .sampler
            case Op.typeSampledImage: types[operands[0]] = .sampledImage(image: operands[1])
            case Op.typeArray: types[operands[0]] = .array(element: operands[1], lengthID: operands[2])
            case Op.typeRuntimeArray: types[operands[0]] = .runtimeArray(element: operands[1])
            case Op.typeStruct: types[operands[0]] = .structure(members: Array(operands.dropFirst()))
            case Op.typePointer: types[operands[0]] = .pointer(storageClass: operands[1], pointee: operands[2])
            case Op.constant where operands.count >= 3: constants[operands[1]] = operands[2]
            case Op.specConstant, Op.specConstantTrue, Op.specConstantFalse:
                specConstantIDs.append(operands[1])
                if operands.count >= 3 { constants[operands[1]] = operands[2] }
            case Op.variable: variables.append((operands[0], operands[1], operands[2]))
            case Op.decorate where operands.count >= 2:
                decorations[operands[0], default: [:]][operands[1]] = operands.count >= 3 ? operands[2] : 1
            case Op.memberDecorate where operands.count >= 4 && operands[2] == Decoration.offset:
                memberOffsets[operands[0], default: [:]][Int(operands[1])] = Int(operands[3])
            default: break
            }
        }

        func size(of typeID: UInt32) -> Int {
            switch types[typeID] {
            case .scalar(let bytes): return bytes
            case .vector(let component, let count): return size(of: component) * count
            case .matrix(let column, let count):
                return (decorations[typeID]?[Decoration.matrixStride].map(Int.init) ?? size(of: column)) * count
            case .array(let element, let lengthID):
                let stride = decorations[typeID]?[Decoration.arrayStride].map(Int.init) ?? size(of: element)
                return stride * Int(constants[lengthID] ?? 1)
            case .structure(let members):
                return members.enumerated().map { (memberOffsets[typeID]?[$0.offset] ?? 0) + size(of: $0.element) }.max() ?? 0
            default: return 0
            }
        }

        for variable in variables {
            guard case .pointer(_, var pointee) = types[variable.type] else { continue }
            if variable.storageClass == StorageClass.pushConstant {
                pushConstantSize = max(pushConstantSize, size(of: pointee))
                guard case .structure(let members) = types[pointee] else { continue }
                pushMembers = try members.enumerated().map { index, member in
                    let name = memberNames[pointee]?[index] ?? "member\(index)"
                    let (scalar, components): (Scalar?, Int)
                    switch types[member] {
                    case .scalar: (scalar, components) = (scalars[member], 1)
                    case .vector(let component, let count): (scalar, components) = (scalars[component], count)
                    default: (scalar, components) = (nil, 0)
                    }
                    guard let scalar, let offset = memberOffsets[pointee]?[index] else {
                        throw KernelCompilerError(diagnostics: [
                            "?:1: error: push-constant member '\(name)' is not a 32-bit scalar or vector (int, uint, float, ivecN, uvecN, vecN)"])
                    }
                    return PushMember(name: name, scalar: scalar, components: components, offset: offset)
                }
                continue
            }
            guard let binding = decorations[variable.id]?[Decoration.binding] else { continue }
            var count: UInt32 = 1
            if case .array(let element, let lengthID) = types[pointee] {
                count = constants[lengthID] ?? 1
                pointee = element
            }
            let kind: BindingKind?
            switch (types[pointee], variable.storageClass) {
            case (.image(let dimension, let sampled), _):
                let isBuffer = dimension == 5
                kind = sampled == 2 ? (isBuffer ? .storageTexelBuffer : .storageImage) : (isBuffer ? .uniformTexelBuffer : .sampledImage)
            case (.sampler, _): kind = .sampler
            case (.sampledImage(let image), _):
                // A samplerBuffer is a sampled buffer image: a uniform texel buffer in Vulkan.
                if case .image(dimension: 5, _) = types[image] { kind = .uniformTexelBuffer } else { kind = .combinedImageSampler }
            case (.structure, StorageClass.storageBuffer): kind = .storageBuffer
            case (.structure, StorageClass.uniform):
                kind = decorations[pointee]?[Decoration.bufferBlock] != nil ? .storageBuffer : .uniformBuffer
            default: kind = nil
            }
            guard let kind else { continue }
            bindings.append(Binding(set: decorations[variable.id]?[Decoration.descriptorSet] ?? 0, binding: binding,
                                    kind: kind, count: count, name: names[variable.id] ?? ""))
        }
        bindings.sort { ($0.set, $0.binding) < ($1.set, $1.binding) }
        specConstants = specConstantIDs.compactMap { id in
            decorations[id]?[Decoration.specId].map { SpecConstant(id: $0, name: names[id] ?? "") }
        }.sorted { $0.id < $1.id }
    }

    /// SPIR-V literal strings: UTF-8, nul-terminated, packed little-endian into words.
    private static func string(from words: ArraySlice<UInt32>) -> String {
        var bytes: [UInt8] = []
        outer: for word in words {
            for shift in stride(from: 0, to: 32, by: 8) {
                let byte = UInt8((word >> UInt32(shift)) & 0xFF)
                if byte == 0 { break outer }
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
