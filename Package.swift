// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Velvet",
    products: [
        .executable(name: "velvet", targets: ["velvet"]),
        .library(name: "VelvetGPU", targets: ["VelvetGPU"]),
    ],
    targets: [
        // System libraries (Debian packages; Tools/setup.sh installs them).
        .systemLibrary(name: "CVulkan", path: "Sources/CVulkan", pkgConfig: "vulkan"),
        .systemLibrary(name: "CFFmpeg", path: "Sources/CFFmpeg", pkgConfig: "libavformat"),
        .systemLibrary(name: "CGlslang", path: "Tools/CGlslang"),

        // GLSL -> SPIR-V at build time.
        .executableTarget(name: "KernelCompiler", dependencies: ["CGlslang"], path: "Tools/KernelCompiler"),
        .plugin(name: "KernelPlugin", capability: .buildTool(), dependencies: ["KernelCompiler"], path: "Tools/KernelPlugin"),
        .target(name: "VelvetKernels", path: "Kernels", plugins: ["KernelPlugin"]),

        // The pipeline.
        .target(name: "VelvetGPU", dependencies: ["CVulkan", "VelvetKernels"]),
        .target(name: "VelvetNN"),
        .executableTarget(name: "velvet", dependencies: ["VelvetGPU"]),

        .testTarget(name: "VelvetGPUTests", dependencies: ["VelvetGPU", "VelvetKernels", "CVulkan", "KernelCompiler"]),
        .testTarget(name: "VelvetNNTests", dependencies: ["VelvetNN"]),
    ]
)
