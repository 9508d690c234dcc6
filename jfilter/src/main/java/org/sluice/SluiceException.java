package org.sluice;

/**
 * An error of the sluice runtime seen from Java: an input or output port that the topology
 * does not connect, a missing or malformed argument, a write outside {@code process}, a
 * buffer larger than its stream allows. The message says what went wrong and what would be
 * right. Thrown out of a filter, it stops the application like any other exception.
 */
public class SluiceException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what went wrong and what would be right
   */
  public SluiceException(String message) {
    super(message);
  }
}
