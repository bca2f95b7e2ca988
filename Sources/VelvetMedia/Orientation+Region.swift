import VelvetGPU

extension Orientation {
    /// The stored-frame rectangle holding an upright region (a frame of `storedWidth` x `storedHeight`).
    func storedRegion(of region: PixelRegion, storedWidth: Int, storedHeight: Int) -> PixelRegion {
        // Map two opposite corners (as pixel indices) back to the stored frame.
        let corners = [(region.x, region.y), (region.x + region.width - 1, region.y + region.height - 1)]
            .map { storedPixel($0, storedWidth: storedWidth, storedHeight: storedHeight) }
        let x0 = min(corners[0].0, corners[1].0), x1 = max(corners[0].0, corners[1].0)
        let y0 = min(corners[0].1, corners[1].1), y1 = max(corners[0].1, corners[1].1)
        return PixelRegion(x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1)
    }
}
