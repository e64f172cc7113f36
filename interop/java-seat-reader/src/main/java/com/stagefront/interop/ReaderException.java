package com.stagefront.interop;

/** A problem the reader cannot go past: one line that names it and the fix, and the exit code. */
final class ReaderException extends RuntimeException {
  static final int BAD_RECORD = 1;
  static final int BAD_SETTING = 2;
  static final int TOO_FEW_EVENTS = 3;
  static final int REGISTRY_UNAVAILABLE = 4;

  final int exitCode;

  ReaderException(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  ReaderException(int exitCode, String message, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }
}
