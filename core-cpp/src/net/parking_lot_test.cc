#include "net/parking_lot.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sluice::net {
namespace {

TEST(ParkingLotTest, FramesComeOutInArrivalOrderEndOfWorkIncluded) {
  ParkingLot lot(4, 100);
  std::memcpy(lot.park(DataFrame{0, 1, 0, 7, 5}), "hello", 5);
  lot.arrived();
  lot.park(EndOfWorkFrame{0, 1, 0});
  std::memcpy(lot.park(DataFrame{0, 2, 0, 8, 3}), "abc", 3);
  lot.arrived();
  ASSERT_EQ(lot.size(), 3u);
  ParkingLot::Parked first = lot.front();
  EXPECT_FALSE(first.end_of_work);
  EXPECT_TRUE(first.complete);
  EXPECT_EQ(first.key, 7u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(first.payload), first.size), "hello");
  lot.pop();
  EXPECT_TRUE(lot.front().end_of_work);
  EXPECT_EQ(lot.front().producer, 1u);
  lot.pop();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(lot.front().payload), lot.front().size), "abc");
  lot.pop();
  EXPECT_TRUE(lot.empty());
}

TEST(ParkingLotTest, AFrameWhosePayloadIsStillArrivingIsNotComplete) {
  // The connection parks a frame before its payload is in (it may take several reads);
  // unparking it then would copy half a payload and hand the slot back while the rest is
  // still to be written into it.
  ParkingLot lot(2, 100);
  lot.park(DataFrame{0, 0, 0, 1, 50});
  EXPECT_FALSE(lot.front().complete);
  lot.arrived();
  EXPECT_TRUE(lot.front().complete);
}

TEST(ParkingLotTest, SlotsAreReusedAsFramesLeave) {
  ParkingLot lot(2, 64);
  std::byte* a = lot.park(DataFrame{0, 0, 0, 1, 10});
  lot.arrived();
  std::byte* b = lot.park(DataFrame{0, 0, 0, 2, 10});
  lot.arrived();
  EXPECT_NE(a, b);
  lot.pop();
  std::byte* c = lot.park(DataFrame{0, 0, 0, 3, 10});  // the slot the first one left
  lot.arrived();
  EXPECT_EQ(c, a);
}

}  // namespace
}  // namespace sluice::net
