package org.sluice;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The arguments a filter class cannot run without, as C++'s {@code SLUICE_FILTER_ARGS}:
 *
 * <pre>{@code
 * @RequiredArgs({"path"})
 * public final class LineReader implements org.sluice.Filter { ... ctx.arg("path") ... }
 * }</pre>
 *
 * <p>{@code sluice validate} and {@code sluice run} then refuse a topology whose filter of
 * this class lacks one of them (file:line:column, before anything starts), instead of the
 * unit of work failing when the filter reads it ({@link Context#arg(String)} without a
 * fallback), perhaps in {@code finalize}, after the whole unit ran. Arguments read with a
 * fallback ({@link Context#arg(String, String)}) need no declaring. Validation reads the
 * annotation without initializing the class. Not inherited: a subclass declares its own.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface RequiredArgs {
  /**
   * @return the names of the arguments, as written under {@code args:}
   */
  String[] value();
}
