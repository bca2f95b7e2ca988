// swift-tools-version:6.1
import PackageDescription

// The libraries are optimised in debug builds too: the tests run the face models' planning,
// the tracker, the per-pixel conversions and the quality metrics (CPU blurs, SSIM) over whole
// photo sets and videos, which take about five times as long unoptimised.
let optimisedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

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
        // `git describe` at build time, for `velvet --version`.
        .executableTarget(name: "VersionStamp", path: "Tools/VersionStamp"),
        .plugin(name: "VersionPlugin", capability: .buildTool(), dependencies: ["VersionStamp"], path: "Tools/VersionPlugin"),

        // The pipeline.
        .target(name: "VelvetFiles"),
        .target(name: "VelvetGPU", dependencies: ["CVulkan", "VelvetFiles", "VelvetKernels"],
                swiftSettings: optimisedInDebug),
        .target(name: "VelvetMedia", dependencies: ["CFFmpeg", "VelvetFiles", "VelvetGPU", "VelvetKernels"],
                swiftSettings: optimisedInDebug),
        .target(name: "VelvetNN", dependencies: ["VelvetGPU", "VelvetKernels"],
                swiftSettings: optimisedInDebug),
        .target(name: "VelvetFace", dependencies: ["VelvetNN", "VelvetMedia", "VelvetGPU", "VelvetKernels"],
                swiftSettings: optimisedInDebug),
        .target(name: "VelvetBeauty", dependencies: ["VelvetFace", "VelvetFiles", "VelvetGPU", "VelvetKernels"],
                swiftSettings: optimisedInDebug),
        .target(name: "VelvetPipeline", dependencies: ["VelvetMedia", "VelvetFace", "VelvetBeauty", "VelvetGPU"],
                swiftSettings: optimisedInDebug),
        .executableTarget(name: "velvet", dependencies: ["VelvetFiles", "VelvetGPU", "VelvetMedia", "VelvetNN", "VelvetFace", "VelvetBeauty", "VelvetPipeline"],
                          plugins: ["VersionPlugin"]),

        // Tests (all run on lavapipe with the validation layer on).
        .target(name: "VelvetTestSupport", dependencies: ["VelvetGPU"]),
        .testTarget(name: "VelvetGPUTests", dependencies: ["VelvetGPU", "VelvetFiles", "VelvetKernels", "VelvetTestSupport", "CVulkan", "KernelCompiler"]),
        .testTarget(name: "VelvetMediaTests", dependencies: ["VelvetMedia", "VelvetFiles", "VelvetTestSupport", "CFFmpeg"]),
        .testTarget(name: "VelvetNNTests", dependencies: ["VelvetNN", "VelvetTestSupport"]),
        .testTarget(name: "VelvetFaceTests", dependencies: ["VelvetFace", "VelvetMedia", "VelvetTestSupport"]),
        .testTarget(name: "VelvetBeautyTests", dependencies: ["VelvetBeauty", "VelvetTestSupport"]),
        .testTarget(name: "VelvetPipelineTests", dependencies: ["VelvetPipeline", "VelvetMedia", "VelvetFace", "VelvetBeauty",
                                                             "VelvetTestSupport"]),
    ]
)
