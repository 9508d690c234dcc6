// PoolRefuge: where the pools of a graph that is gone wait for the blocks a client still
// holds.
//
// A program that submits units to an Application may keep result buffers after their unit
// ended, until the Application stops (sluice/application.h). When a unit fails, the
// Application replaces its deployment; the old one's threads, connections and files should
// go at once (a long-lived `sluice serve` meets many failed units), but its pools cannot, as
// a buffer the client holds points into one. So the graph hands its pools here when it is
// destroyed (Graph::hand_pools_to): a pool's block memory is freed once every block is back,
// and its slot records with it (and a language binding's records of them); the rest of its
// bookkeeping (its rings: 16 B a block, and its return lanes) when the refuge goes. That
// last part is not freed earlier because a client thread may still be inside release()
// after putting the last block back, with nothing to tell when it has left.
//
// Ownership: owns the pools it adopted. Destroy it after every buffer from them is released.
// Thread safety: one thread at a time (the Application's runner); releases from anywhere.
#ifndef SLUICE_BUFFER_POOL_REFUGE_H_
#define SLUICE_BUFFER_POOL_REFUGE_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "buffer/buffer_pool.h"

namespace sluice {

class PoolRefuge {
 public:
  PoolRefuge() = default;
  PoolRefuge(const PoolRefuge&) = delete;
  PoolRefuge& operator=(const PoolRefuge&) = delete;

  // Takes `pool`, whose graph is going and whose run's signal may go first. Frees its block
  // memory now when every block is back.
  void adopt(std::unique_ptr<BufferPool> pool);
  // Frees the block memory of every pool whose blocks have all come back since.
  void sweep();

  std::size_t pools() const { return pools_.size(); }
  // Block memory still held, waiting for buffers a client holds.
  std::size_t memory_bytes() const;

 private:
  std::vector<std::unique_ptr<BufferPool>> pools_;
  std::size_t waiting_ = 0;  // pools_[waiting_..] may still hold block memory
};

}  // namespace sluice

#endif  // SLUICE_BUFFER_POOL_REFUGE_H_
