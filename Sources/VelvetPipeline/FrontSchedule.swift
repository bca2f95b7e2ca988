import VelvetBeauty
import VelvetGPU
import VelvetMedia

/// Which frames' skin fronts a frame's `record` records ahead of the blends (`SkinStage.recordFront`),
/// for `BeautyEffect` and `CompareEffect`: every frame once, in order, through the frame's index
/// + `BeautyEffect.frontLead` (as far as the input goes); and what each was tracked with until
/// its own frame is recorded.
struct FrontSchedule<Tracked> {
    /// What the fronts ahead keep per pixel: per skin stage `frontLead` more sets of its mask,
    /// spot-fixed and smoothed images (about 18 bytes), and on a GPU the frames ahead
    /// converted into working images of their own (`frontLead` + 1, 8 bytes each).
    static func bytesPerPixel(skinStages: Int) -> Int {
        skinStages * BeautyEffect.frontLead * 18 + (BeautyEffect.frontLead + 1) * 8
    }

    private var recorded = 0
    private var waiting: [Int: Tracked] = [:]

    /// Calls `front` for each frame not yet recorded through `frame`'s index + `frontLead`, with its
    /// working image, and keeps what it returns; returns `frame`'s own.
    mutating func record(for frame: EffectFrame, upcoming: EffectFrame.Upcoming,
                         front: (_ index: Int, _ image: GPUImage) throws -> Tracked) throws -> Tracked {
        while recorded <= frame.index + BeautyEffect.frontLead {
            guard let image = recorded == frame.index ? frame.input : try upcoming(recorded) else { break }
            waiting[recorded] = try front(recorded, image)
            recorded += 1
        }
        guard let own = waiting.removeValue(forKey: frame.index) else {
            throw BeautyError.invalidSettings("frame \(frame.index) recorded out of order (fronts through \(recorded - 1))")
        }
        return own
    }
}
