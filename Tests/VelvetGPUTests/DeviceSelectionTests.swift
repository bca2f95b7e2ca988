import VelvetGPU
import VelvetTestSupport
import XCTest

final class DeviceSelectionTests: GPUTestCase {
    private let devices = [
        GPUDeviceInfo(index: 0, name: "llvmpipe (LLVM 15.0.6, 256 bits)", kind: .cpu, driver: "llvmpipe", apiVersion: "1.3.230", deviceLocalMemoryBytes: 1 << 31),
        GPUDeviceInfo(index: 1, name: "Intel(R) UHD Graphics 630", kind: .integrated, driver: "Intel", apiVersion: "1.3.0", deviceLocalMemoryBytes: 1 << 30),
        GPUDeviceInfo(index: 2, name: "NVIDIA H200", kind: .discrete, driver: "NVIDIA", apiVersion: "1.4.0", deviceLocalMemoryBytes: 1 << 37),
    ]

    func testPrefersDiscreteThenIntegratedThenCPU() throws {
        XCTAssertEqual(try DeviceSelector.choose(from: devices, request: nil).index, 2)
        XCTAssertEqual(try DeviceSelector.choose(from: Array(devices.prefix(2)), request: nil).index, 1)
        XCTAssertEqual(try DeviceSelector.choose(from: Array(devices.prefix(1)), request: nil).index, 0)
    }

    func testOverrideByIndexOrNameSubstring() throws {
        XCTAssertEqual(try DeviceSelector.choose(from: devices, request: "0").index, 0)
        XCTAssertEqual(try DeviceSelector.choose(from: devices, request: " uhd ").index, 1)
        XCTAssertEqual(try DeviceSelector.choose(from: devices, request: "LLVMPIPE").index, 0)
        XCTAssertEqual(try DeviceSelector.choose(from: devices, request: "").index, 2)
    }

    func testBogusOverrideNamesTheChoices() {
        XCTAssertThrowsError(try DeviceSelector.choose(from: devices, request: "radeon")) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("'radeon'") && message.contains("2: NVIDIA H200"), message)
        }
        // All digits is an index, never part of a name ("630" is in "UHD Graphics 630").
        for request in ["7", "630", " 15 "] {
            XCTAssertThrowsError(try DeviceSelector.choose(from: devices, request: request)) { error in
                guard case GPUError.deviceIndexOutOfRange(_, let available) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(available.count, 3)
                XCTAssertTrue("\(error)".contains("available: 0: llvmpipe"), "\(error)")
            }
        }
        XCTAssertThrowsError(try DeviceSelector.choose(from: [], request: nil)) { error in
            XCTAssertEqual(error as? GPUError, .noDevice)
        }
    }

    func testRealContextHonoursTheOverride() throws {
        let name = try context.device.name
        let byIndex = try GPUContext(request: "\(try context.device.index)", validation: false)
        XCTAssertEqual(byIndex.device.name, name)
        XCTAssertThrowsError(try GPUContext(request: "no-such-gpu-anywhere", validation: false)) { error in
            XCTAssertTrue("\(error)".contains("no Vulkan device matches 'no-such-gpu-anywhere'"), "\(error)")
        }
    }
}
