// Item: what travels through a stream's queues: a buffer reference, or an end-of-work mark.
// Defined in the public header (sluice/stream.h, detail::QueueItem) because the inline
// OutputStream::write fills queue cells itself.
#ifndef SLUICE_STREAM_ITEM_H_
#define SLUICE_STREAM_ITEM_H_

#include "buffer/slot.h"
#include "sluice/stream.h"

namespace sluice {

using Item = detail::QueueItem;

}  // namespace sluice

#endif  // SLUICE_STREAM_ITEM_H_
