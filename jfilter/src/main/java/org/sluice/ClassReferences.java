package org.sluice;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

// The classes a class file names in its constant pool: the classes its code uses (new, calls,
// field accesses, casts, catch clauses) and the types in the descriptors of the members it
// refers to. Validation loads them (Bridge.missingDependency) to find a dependency jar that is
// missing from a filter's classpath before a run needs it. Reads the class file only: nothing
// is loaded or run here.
final class ClassReferences {
  private ClassReferences() {}

  // Binary names ("com.example.Helper", "Outer$Inner"), in the order the pool lists them,
  // without arrays of primitives. Throws IOException on a malformed class file.
  static List<String> of(InputStream classFile) throws IOException {
    DataInputStream in = new DataInputStream(classFile);
    if (in.readInt() != 0xCAFEBABE) throw new IOException("not a class file");
    in.readUnsignedShort(); // minor version
    in.readUnsignedShort(); // major version
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    List<Integer> classNames = new ArrayList<>();
    List<Integer> descriptors = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1: // Utf8 (modified UTF-8, as DataInput reads it)
          utf8[i] = in.readUTF();
          break;
        case 7: // Class
          classNames.add(in.readUnsignedShort());
          break;
        case 16: // MethodType
          descriptors.add(in.readUnsignedShort());
          break;
        case 12: // NameAndType
          in.readUnsignedShort();
          descriptors.add(in.readUnsignedShort());
          break;
        case 8: // String
        case 19: // Module
        case 20: // Package
          in.readUnsignedShort();
          break;
        case 15: // MethodHandle
          in.readUnsignedByte();
          in.readUnsignedShort();
          break;
        case 3: // Integer
        case 4: // Float
        case 9: // Fieldref
        case 10: // Methodref
        case 11: // InterfaceMethodref
        case 17: // Dynamic
        case 18: // InvokeDynamic
          in.readInt();
          break;
        case 5: // Long
        case 6: // Double: two slots
          in.readLong();
          i++;
          break;
        default:
          throw new IOException("unknown constant pool tag " + tag + " at entry " + i);
      }
    }
    Set<String> names = new LinkedHashSet<>();
    for (int index : classNames) {
      String name = at(utf8, index);
      if (name.startsWith("[")) {
        fromDescriptor(name, names);
      } else {
        names.add(name.replace('/', '.'));
      }
    }
    for (int index : descriptors) fromDescriptor(at(utf8, index), names);
    return new ArrayList<>(names);
  }

  private static String at(String[] utf8, int index) throws IOException {
    if (index <= 0 || index >= utf8.length || utf8[index] == null) {
      throw new IOException("constant pool index " + index + " is not a Utf8 entry");
    }
    return utf8[index];
  }

  // The class types in a field or method descriptor: "(Lcom/x/A;[Lcom/x/B;I)V" -> com.x.A, com.x.B.
  private static void fromDescriptor(String descriptor, Set<String> names) {
    for (int at = descriptor.indexOf('L'); at >= 0; at = descriptor.indexOf('L', at)) {
      // Outside class names a descriptor holds only '(', ')', '[' and the one-letter primitive
      // types, none of them 'L'; each search starts after the ';' that ends a class name.
      int end = descriptor.indexOf(';', at);
      if (end < 0) return;
      names.add(descriptor.substring(at + 1, end).replace('/', '.'));
      at = end + 1;
    }
  }
}
