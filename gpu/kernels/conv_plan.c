/* The host-side decisions of a cuDNN convolution (conv_plan.h). */
#include "conv_plan.h"

#include <inttypes.h>
#include <stdio.h>

static bool bad(char *why, size_t cap, const char *what) {
  if (cap) snprintf(why, cap, "%s", what);
  return false;
}

bool tfd_conv_plan_make(const tfd_dm_conv *p, tfd_conv_plan *plan, char *why, size_t cap) {
  const int64_t in[2] = {p->h, p->w}, k[2] = {p->kh, p->kw}, out[2] = {p->oh, p->ow};
  if (p->n < 0 || p->h < 0 || p->w < 0 || p->c < 0 || p->kh < 1 || p->kw < 1 || p->o < 0 || p->oh < 0 || p->ow < 0)
    return bad(why, cap, "negative size or empty filter window");
  for (int d = 0; d < 2; d++) {
    if (p->stride[d] < 1 || p->dilation[d] < 1) return bad(why, cap, "stride and dilation must be at least 1");
    if (p->pad_before[d] < 0 || p->pad_after[d] < 0) return bad(why, cap, "negative padding");
    /* sizes are tensor dimensions (each under 2^62 elements), taps and dilations filter ones: no overflow */
    int64_t eff = (k[d] - 1) * p->dilation[d] + 1, span = in[d] + p->pad_before[d] + p->pad_after[d] - eff;
    int64_t want = span < 0 ? 0 : span / p->stride[d] + 1;
    if (out[d] != want) {
      if (cap)
        snprintf(why, cap,
                 "%s: output %" PRId64 " but an input of %" PRId64 " padded %" PRId64 "+%" PRId64 " under %" PRId64
                 " taps (dilation %" PRId64 ", stride %" PRId64 ") gives %" PRId64,
                 d ? "width" : "height", out[d], in[d], p->pad_before[d], p->pad_after[d], k[d], p->dilation[d],
                 p->stride[d], want);
      return false;
    }
  }
  if (p->depthwise && (p->c == 0 ? p->o != 0 : p->o % p->c != 0))
    return bad(why, cap, "depthwise output channels must be a multiple of the input channels");
  plan->groups = p->depthwise ? p->c : 1;
  plan->cg = p->depthwise ? 1 : p->c;
  plan->explicit_pad = false;
  for (int d = 0; d < 2; d++) {
    int64_t common = p->pad_before[d] < p->pad_after[d] ? p->pad_before[d] : p->pad_after[d];
    plan->pad[d] = common;
    plan->extra_before[d] = p->pad_before[d] - common;
    plan->extra_after[d] = p->pad_after[d] - common;
    if (plan->extra_before[d] || plan->extra_after[d]) plan->explicit_pad = true;
  }
  plan->hp = p->h + plan->extra_before[0] + plan->extra_after[0];
  plan->wp = p->w + plan->extra_before[1] + plan->extra_after[1];
  plan->empty_sum = p->c == 0;
  plan->filter_elems = p->o * p->kh * p->kw * plan->cg;
  /* The largest tensor of one image: the (padded) input, its output, or the filter. */
  int64_t image = plan->hp * plan->wp * p->c, result = p->oh * p->ow * p->o, per = image > result ? image : result;
  bool ints = plan->hp <= INT32_MAX && plan->wp <= INT32_MAX && p->c <= INT32_MAX && p->o <= INT32_MAX &&
              p->kh <= INT32_MAX && p->kw <= INT32_MAX && plan->pad[0] <= INT32_MAX && plan->pad[1] <= INT32_MAX &&
              p->stride[0] <= INT32_MAX && p->stride[1] <= INT32_MAX && p->dilation[0] <= INT32_MAX &&
              p->dilation[1] <= INT32_MAX;
  plan->use_cudnn = ints && per <= TFD_CONV_MAX_ELEMS && plan->filter_elems <= TFD_CONV_MAX_ELEMS;
  plan->chunk_n = 1;
  if (plan->use_cudnn && per > 0) {
    int64_t most = TFD_CONV_MAX_ELEMS / per;
    plan->chunk_n = p->n < most ? p->n : most;
  } else if (plan->use_cudnn) {
    plan->chunk_n = p->n;
  }
  if (plan->chunk_n < 1) plan->chunk_n = 1;
  if (plan->chunk_n > INT32_MAX) plan->chunk_n = INT32_MAX;
  return true;
}
