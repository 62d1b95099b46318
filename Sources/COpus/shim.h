// COpus: libopus (Debian libopus-dev 1.3.1; RFC 6716), for the call's Opus encoding (issue 28).
// opus_encoder_ctl/opus_decoder_ctl are variadic macros over request codes: one static inline wrapper per
// request the project uses, so Swift calls them with plain arguments.
#ifndef SCREENCAST_COPUS_SHIM_H
#define SCREENCAST_COPUS_SHIM_H

#include <opus/opus.h>
#include <stdint.h>

static inline int copus_set_bitrate(OpusEncoder *e, int32_t bps) { return opus_encoder_ctl(e, OPUS_SET_BITRATE(bps)); }
static inline int copus_set_dtx(OpusEncoder *e, int on) { return opus_encoder_ctl(e, OPUS_SET_DTX(on)); }
static inline int copus_set_inband_fec(OpusEncoder *e, int on) { return opus_encoder_ctl(e, OPUS_SET_INBAND_FEC(on)); }
static inline int copus_set_packet_loss_perc(OpusEncoder *e, int percent) {
    return opus_encoder_ctl(e, OPUS_SET_PACKET_LOSS_PERC(percent));
}
static inline int copus_get_lookahead(OpusEncoder *e, int32_t *samples) {
    return opus_encoder_ctl(e, OPUS_GET_LOOKAHEAD(samples));
}
static inline int copus_get_bitrate(OpusEncoder *e, int32_t *bps) { return opus_encoder_ctl(e, OPUS_GET_BITRATE(bps)); }
static inline int copus_get_dtx(OpusEncoder *e, int32_t *on) { return opus_encoder_ctl(e, OPUS_GET_DTX(on)); }
static inline int copus_get_inband_fec(OpusEncoder *e, int32_t *on) { return opus_encoder_ctl(e, OPUS_GET_INBAND_FEC(on)); }
static inline int copus_get_in_dtx(OpusEncoder *e, int32_t *on) { return opus_encoder_ctl(e, OPUS_GET_IN_DTX(on)); }

static inline int copus_ok(void) { return OPUS_OK; }
static inline int copus_application_audio(void) { return OPUS_APPLICATION_AUDIO; }

#endif
