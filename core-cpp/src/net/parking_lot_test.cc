#include "net/parking_lot.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sluice::net {
namespace {

TEST(ParkingLotTest, FramesComeOutInArrivalOrderEndOfWorkIncluded) {
  ParkingLot lot(4, 100);
  const ParkingLot::Spot hello = lot.park(DataFrame{0, 1, 0, 7, 5});
  std::memcpy(hello.payload, "hello", 5);
  lot.arrived(hello.ticket);
  lot.park(EndOfWorkFrame{0, 1, 0});
  const ParkingLot::Spot abc = lot.park(DataFrame{0, 2, 0, 8, 3});
  std::memcpy(abc.payload, "abc", 3);
  lot.arrived(abc.ticket);
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
  const ParkingLot::Spot spot = lot.park(DataFrame{0, 0, 0, 1, 50});
  EXPECT_FALSE(lot.front().complete);
  lot.arrived(spot.ticket);
  EXPECT_TRUE(lot.front().complete);
}

TEST(ParkingLotTest, SlotsAreReusedAsFramesLeave) {
  ParkingLot lot(2, 64);
  const ParkingLot::Spot a = lot.park(DataFrame{0, 0, 0, 1, 10});
  lot.arrived(a.ticket);
  const ParkingLot::Spot b = lot.park(DataFrame{0, 0, 0, 2, 10});
  lot.arrived(b.ticket);
  EXPECT_NE(a.payload, b.payload);
  lot.pop();
  const ParkingLot::Spot c = lot.park(DataFrame{0, 0, 0, 3, 10});  // the slot the first one left
  lot.arrived(c.ticket);
  EXPECT_EQ(c.payload, a.payload);
}

// Connections from two hosts park frames of one stream and read their payloads side by
// side: the frame whose payload completes is not always the one parked last. Marking the
// last one instead left the first incomplete for ever (its stream never unparked again: a
// three-host run hung with frames parked and every buffer free) and let the other move
// with half its payload.
TEST(ParkingLotTest, EachFrameIsCompleteWhenItsOwnPayloadIsIn) {
  ParkingLot lot(4, 100);
  const ParkingLot::Spot from_a = lot.park(DataFrame{0, 0, 0, 1, 50});  // host a's payload starts
  const ParkingLot::Spot from_c = lot.park(DataFrame{0, 2, 0, 3, 50});  // then host c's
  lot.arrived(from_a.ticket);                                         // a's is in first
  EXPECT_TRUE(lot.front().complete);
  EXPECT_EQ(lot.front().key, 1u);
  lot.pop();
  EXPECT_FALSE(lot.front().complete) << "c's frame moved before its payload was in";
  const ParkingLot::Spot again = lot.park(DataFrame{0, 0, 0, 2, 50});  // a's next, in the freed slot
  lot.arrived(again.ticket);
  EXPECT_FALSE(lot.front().complete);
  lot.arrived(from_c.ticket);
  EXPECT_TRUE(lot.front().complete);
  EXPECT_EQ(lot.front().key, 3u);
  lot.pop();
  EXPECT_TRUE(lot.front().complete);
  EXPECT_EQ(lot.front().key, 2u);
}

}  // namespace
}  // namespace sluice::net
