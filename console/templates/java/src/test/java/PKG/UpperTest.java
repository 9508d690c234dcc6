package @PACKAGE@;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class UpperTest {
  @Test
  void upperCasesLettersAndLeavesTheRest() {
    ByteBuffer data = ByteBuffer.wrap("hello, sluice 1!".getBytes(StandardCharsets.UTF_8));
    Upper.toUpper(data, data.capacity());
    assertEquals("HELLO, SLUICE 1!", new String(data.array(), StandardCharsets.UTF_8));
  }
}
