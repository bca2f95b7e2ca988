// The fused epilogue's kind as specialisation constants, for lavapipe: it runs both sides of
// every branch, so an epilogue read from the push block pays for every activation (tanh,
// exp ...) and every way of reading the residual on every output. -1 (GPUs): as the push
// block `p` says. Included by the convolution kernels before their epilogue.
layout(constant_id = 20) const int ACT1 = -1;     // ACT_* of act1
layout(constant_id = 21) const int ACT2 = -1;     // ACT_* of act2
layout(constant_id = 22) const int RESIDUAL = -1; // RESIDUAL_*
const int RESIDUAL_NONE = 0;
const int RESIDUAL_AS_IS = 1;
const int RESIDUAL_POOLED = 2;  // the max over a fused skip-path pool's window
const int RESIDUAL_RESIZED = 3; // a fused bilinear resize

#define EPILOGUE_ACT1 (ACT1 >= 0 ? ACT1 : p.act1)
#define EPILOGUE_ACT2 (ACT2 >= 0 ? ACT2 : p.act2)
#define EPILOGUE_HAS_RESIDUAL (RESIDUAL >= 0 ? RESIDUAL != RESIDUAL_NONE : p.residualC4 >= 0)
