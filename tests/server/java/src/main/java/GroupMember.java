import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A member of a consumer-protocol group (KIP-848, {@code group.protocol=consumer}) that reports
 * what happens to it as JSON lines on stdout, the lines tests/server/member_process.py prints
 * for confluent-kafka:
 *
 * <pre>
 * member BOOTSTRAP GROUP CLIENT_ID SUBSCRIPTION ASSIGNOR
 * </pre>
 *
 * SUBSCRIPTION is {@code topics:A,B} (a topic list), {@code pattern:REGEX} (a java.util.regex
 * Pattern, which the client matches against the topics it knows) or {@code regex:REGEX} (a
 * SubscriptionPattern, which the coordinator matches); ASSIGNOR is the server-side assignor
 * ({@code group.remote.assignor}) or {@code -} for the coordinator's default.
 *
 * Lines: {@code {"event": "assigned"|"revoked"|"lost", "at_us": T, "partitions": ["topic:0"]}}
 * from the rebalance listener (T: wall-clock microseconds when the callback ran, comparable
 * across processes), {@code {"event": "member", "member_id": ID, "epoch": E}} when either
 * changes, {@code {"event": "record", "partition": "topic:0", "offset": O}} per record, and
 * the answers to stdin's commands: {@code commit topic:0:5,topic:1:7} commits those offsets
 * and prints {@code {"event": "committed", "offsets": {"topic:0": 5}}} as read back with
 * committed(); {@code close} closes the consumer (its revocations are reported first) and
 * prints {@code {"event": "closed"}}. The member gives up after LIFETIME_MS.
 */
final class GroupMember {
    private static final long LIFETIME_MS = 240_000;

    private GroupMember() {}

    static void main(String[] args) throws Exception {
        String bootstrap = args[1], group = args[2], clientId = args[3], subscription = args[4], assignor = args[5];
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        if (!assignor.equals("-")) p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        // A client-side pattern sees a new topic at the next metadata refresh: 5 min by default.
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) commands.add(line.trim());
            } catch (Exception ignored) {
                // stdin closed: no more commands
            }
        });
        reader.setDaemon(true);
        reader.start();

        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            @Override public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                transition("revoked", partitions);
            }
            @Override public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                transition("assigned", partitions);
            }
            @Override public void onPartitionsLost(Collection<TopicPartition> partitions) {
                transition("lost", partitions);
            }
        };
        String[] kind = subscription.split(":", 2);
        switch (kind[0]) {
            case "topics" -> consumer.subscribe(Arrays.asList(kind[1].split(",")), listener);
            case "pattern" -> consumer.subscribe(Pattern.compile(kind[1]), listener);
            case "regex" -> consumer.subscribe(new SubscriptionPattern(kind[1]), listener);
            default -> throw new IllegalArgumentException(subscription);
        }

        String member = "";
        int epoch = Integer.MIN_VALUE;
        long deadline = System.currentTimeMillis() + LIFETIME_MS;
        while (System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                emit("{\"event\": \"record\", \"partition\": " + quote(name(new TopicPartition(r.topic(), r.partition())))
                    + ", \"offset\": " + r.offset() + "}");
            }
            var metadata = consumer.groupMetadata();
            if (!metadata.memberId().equals(member) || metadata.generationId() != epoch) {
                member = metadata.memberId();
                epoch = metadata.generationId();
                emit("{\"event\": \"member\", \"member_id\": " + quote(member) + ", \"epoch\": " + epoch + "}");
            }
            for (String command; (command = commands.poll()) != null; ) {
                if (command.equals("close")) {
                    consumer.close();
                    emit("{\"event\": \"closed\"}");
                    return;
                } else if (command.startsWith("commit ")) {
                    commit(consumer, command.substring("commit ".length()));
                } else {
                    throw new IllegalArgumentException(command);
                }
            }
        }
        consumer.close(CloseOptions.timeout(Duration.ZERO));
        System.exit(1);
    }

    private static void commit(KafkaConsumer<byte[], byte[]> consumer, String offsets) {
        Map<TopicPartition, OffsetAndMetadata> asked = new HashMap<>();
        for (String item : offsets.split(",")) {
            int last = item.lastIndexOf(':'), before = item.lastIndexOf(':', last - 1);
            asked.put(new TopicPartition(item.substring(0, before), Integer.parseInt(item.substring(before + 1, last))),
                      new OffsetAndMetadata(Long.parseLong(item.substring(last + 1))));
        }
        consumer.commitSync(asked);
        Map<TopicPartition, OffsetAndMetadata> read = consumer.committed(Set.copyOf(asked.keySet()));
        emit("{\"event\": \"committed\", \"offsets\": {" + read.entrySet().stream()
            .map(e -> quote(name(e.getKey())) + ": " + (e.getValue() == null ? -1 : e.getValue().offset()))
            .sorted().collect(Collectors.joining(", ")) + "}}");
    }

    private static void transition(String event, Collection<TopicPartition> partitions) {
        Instant now = Instant.now();
        long atMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        List<String> names = partitions.stream().map(GroupMember::name).sorted().map(GroupMember::quote).toList();
        emit("{\"event\": \"" + event + "\", \"at_us\": " + atMicros + ", \"partitions\": ["
            + String.join(", ", names) + "]}");
    }

    private static String name(TopicPartition tp) {
        return tp.topic() + ":" + tp.partition();
    }

    /** A JSON string of a topic name or member id (letters, digits, '.', '_', '-', ':'). */
    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
