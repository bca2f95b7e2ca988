/// VelvetBeauty: the skin pipeline's GPU stages (mask and zones, spot removal, bilateral or
/// frequency-separation smoothing, blend, optional sharpen; `SkinPipeline` runs them all)
/// and the quality metrics that judge them (`QualityMetrics`). Each stage is one small
/// type in its own file; every knob lives in `BeautySettings`.
public enum VelvetBeauty {}
