// Runs Weka command lines one after another in one Java VM, for tests/ektesting/weka_tools.py.
//
// Started as `java -cp weka.jar WekaBatch.java` (Java's single-file source launcher). Prints
// "ready", then reads one command per line on standard input: the main class and its
// arguments, separated by tabs. Each command's main(String[]) runs with System.out and
// System.err captured; the answer is a line "STATUS<TAB>OUT_BYTES<TAB>ERR_BYTES" followed by
// those bytes (STATUS is 1 when main threw, as a Java VM of its own would exit, else 0).
// Starting Java once instead of once per command is what this is for: a VM start and
// Weka's class loading cost more than most of the runs the tests make.

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public class WekaBatch {
    public static void main(String[] ignored) throws Exception {
        Charset text = Charset.forName(System.getProperty("native.encoding",
                                                          Charset.defaultCharset().name()));
        OutputStream answers = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out));
        PrintStream out = System.out, err = System.err;
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in,
                                                                           StandardCharsets.UTF_8));
        answers.write("ready\n".getBytes(StandardCharsets.UTF_8));
        answers.flush();
        String line;
        while ((line = commands.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
            ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
            PrintStream capturedOut = new PrintStream(outBytes, true, text);
            PrintStream capturedErr = new PrintStream(errBytes, true, text);
            System.setOut(capturedOut);
            System.setErr(capturedErr);
            int status = 0;
            try {
                Class.forName(parts[0]).getMethod("main", String[].class)
                    .invoke(null, (Object) Arrays.copyOfRange(parts, 1, parts.length));
            } catch (InvocationTargetException thrown) {
                status = 1;
                thrown.getCause().printStackTrace(capturedErr);
            } catch (Throwable thrown) {
                status = 1;
                thrown.printStackTrace(capturedErr);
            } finally {
                capturedOut.flush();
                capturedErr.flush();
                System.setOut(out);
                System.setErr(err);
            }
            byte[] o = outBytes.toByteArray(), e = errBytes.toByteArray();
            answers.write((status + "\t" + o.length + "\t" + e.length + "\n")
                          .getBytes(StandardCharsets.UTF_8));
            answers.write(o);
            answers.write(e);
            answers.flush();
        }
    }
}
