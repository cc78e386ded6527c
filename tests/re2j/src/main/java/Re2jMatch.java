import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Kafka's SubscribedTopicRegex check and match, as its group coordinator does them
 * (GroupMetadataManager through Utils.throwIfRegularExpressionIsInvalid, and
 * TopicRegexResolver): Pattern.compile, then Pattern.matcher(topic).matches().
 *
 * Each line of standard input is a pattern followed by the names to match it against, each
 * field base64 of its UTF-8 and separated by a space. Each line of output answers one line of
 * input: "ok" and one 1 or 0 per name, or "invalid" and base64 of the exception's
 * getDescription().
 */
public final class Re2jMatch {
    public static void main(String[] args) throws Exception {
        Base64.Decoder decoder = Base64.getDecoder();
        Base64.Encoder encoder = Base64.getEncoder();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] fields = line.split(" ", -1);
            String regex = new String(decoder.decode(fields[0]), StandardCharsets.UTF_8);
            Pattern pattern;
            try {
                pattern = Pattern.compile(regex);
            } catch (PatternSyntaxException e) {
                out.append("invalid ")
                    .append(encoder.encodeToString(e.getDescription().getBytes(StandardCharsets.UTF_8)))
                    .append('\n');
                continue;
            }
            out.append("ok");
            for (int i = 1; i < fields.length; i++) {
                String name = new String(decoder.decode(fields[i]), StandardCharsets.UTF_8);
                out.append(pattern.matcher(name).matches() ? " 1" : " 0");
            }
            out.append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }
}
