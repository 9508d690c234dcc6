package com.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ShoutTest {
  @Test
  void shoutsTheWordAndItsIndex() {
    assertEquals("HELLO 2\n", Shout.shout("hello", 2));
  }
}
