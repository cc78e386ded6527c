import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client's data-plane modes, printing the lines tests/server/data_process.py prints
 * for the Python clients (its docstring describes them):
 *
 * <pre>
 * produce BOOTSTRAP TOPIC COMPRESSIONS COUNT KEYS INTERVAL_MS START
 * consume BOOTSTRAP GROUP TOPIC SESSION_MS MAX_RECORDS PAUSE_MS
 * tail    BOOTSTRAP TOPIC PARTITION MAX_WAIT_MS
 * offsets BOOTSTRAP TOPIC PARTITIONS TIMESTAMPS
 * </pre>
 *
 * The producer keeps the client's defaults (acks=all, enable.idempotence=true, retries until
 * delivery.timeout.ms). {@code offsets} asks the admin client for each partition's earliest,
 * latest and max-timestamp offsets and, for each of the comma-separated TIMESTAMPS ("-" for
 * none), the offset for that timestamp, printing {@code offset PARTITION SPEC OFFSET TIMESTAMP}.
 */
final class DataClient {
    static final Set<String> MODES = Set.of("produce", "consume", "tail", "offsets");
    private static final long LIFETIME_MS = 120_000;
    private static final String LINGER_MS = "5";

    private DataClient() {}

    static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], args[3].split(","), Integer.parseInt(args[4]),
                Integer.parseInt(args[5]), Integer.parseInt(args[6]), args[7].equals("on-go"));
            case "consume" -> consume(args[1], args[2], args[3], args[4], args[5], Integer.parseInt(args[6]));
            case "tail" -> tail(args[1], args[2], Integer.parseInt(args[3]), args[4]);
            case "offsets" -> offsets(args[1], args[2], Integer.parseInt(args[3]), args[4]);
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static String key(int seq, int keys) {
        return "key-" + (seq % keys);
    }

    static String value(int seq, String compression) {
        return String.format("%08d-%s-%s", seq, compression, "payload".repeat(8));
    }

    private static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** One producer per compression, all at once, sending in turns (tests/server/data_process.py's Plan). */
    private static void produce(String bootstrap, String topic, String[] compressions, int count, int keys,
                                int intervalMs, boolean onGo) throws InterruptedException, IOException {
        List<KafkaProducer<String, String>> producers = new ArrayList<>();
        for (String compression : compressions) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
            p.put(ProducerConfig.LINGER_MS_CONFIG, LINGER_MS);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producers.add(new KafkaProducer<>(p));
        }
        if (onGo) {
            emit("ready");
            new BufferedReader(new InputStreamReader(System.in)).readLine();
        }
        for (int n = 0; n < count; n++) {
            for (int index = 0; index < compressions.length; index++) {
                final int seq = index * count + n;
                producers.get(index).send(
                    new ProducerRecord<>(topic, key(seq, keys), value(seq, compressions[index])),
                    (metadata, error) -> emit(error != null
                        ? "failed " + seq + " " + error.toString().replace('\n', ' ')
                        : "acked " + metadata.partition() + " " + metadata.offset() + " " + seq));
                if (intervalMs > 0) Thread.sleep(intervalMs);
            }
        }
        for (KafkaProducer<String, String> producer : producers) {
            producer.flush();
            producer.close();
        }
    }

    private static Properties consumerProperties(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return p;
    }

    private static void emitRecord(ConsumerRecord<String, String> r) {
        emit("record " + r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
    }

    private static void consume(String bootstrap, String group, String topic, String sessionMs, String maxRecords,
                                int pauseMs) throws InterruptedException {
        Properties p = consumerProperties(bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, sessionMs);
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "200");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxRecords);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            String assigned = null;
            long deadline = System.currentTimeMillis() + LIFETIME_MS;
            while (System.currentTimeMillis() < deadline) {
                var records = consumer.poll(Duration.ofMillis(100));
                String line = "assigned " + consumer.assignment().stream().map(TopicPartition::partition)
                    .sorted().map(String::valueOf).collect(Collectors.joining(","));
                if (!line.equals(assigned)) {
                    emit(line);
                    assigned = line;
                }
                Map<Integer, Long> next = new TreeMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    emitRecord(r);
                    next.put(r.partition(), r.offset() + 1);
                }
                if (next.isEmpty()) continue;
                String text = next.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue())
                    .collect(Collectors.joining(","));
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                next.forEach((partition, offset) -> offsets.put(new TopicPartition(topic, partition),
                    new OffsetAndMetadata(offset)));
                emit("committing " + text);
                try {
                    consumer.commitSync(offsets);
                    emit("committed " + text);
                } catch (KafkaException e) { // refused during a rebalance: reported, not fatal
                    emit("commit-failed " + text + " " + e.toString().replace('\n', ' '));
                }
                Thread.sleep(pauseMs);
            }
        }
    }

    private static void tail(String bootstrap, String topic, int partition, String maxWaitMs) {
        Properties p = consumerProperties(bootstrap);
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, maxWaitMs);
        TopicPartition tp = new TopicPartition(topic, partition);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToEnd(List.of(tp));
            emit("positioned " + partition + " " + consumer.position(tp));
            long deadline = System.currentTimeMillis() + LIFETIME_MS;
            while (System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(1000)).forEach(DataClient::emitRecord);
            }
        }
    }

    private static void offsets(String bootstrap, String topic, int partitions, String timestamps) throws Exception {
        Map<String, OffsetSpec> specs = new LinkedHashMap<>();
        specs.put("earliest", OffsetSpec.earliest());
        specs.put("latest", OffsetSpec.latest());
        specs.put("max", OffsetSpec.maxTimestamp());
        if (!timestamps.equals("-")) {
            for (String t : timestamps.split(",")) specs.put(t, OffsetSpec.forTimestamp(Long.parseLong(t)));
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            for (var spec : specs.entrySet()) {
                Map<TopicPartition, OffsetSpec> request = new HashMap<>();
                for (int p = 0; p < partitions; p++) request.put(new TopicPartition(topic, p), spec.getValue());
                Map<TopicPartition, ListOffsetsResultInfo> result = admin.listOffsets(request).all().get();
                for (int p = 0; p < partitions; p++) {
                    ListOffsetsResultInfo info = result.get(new TopicPartition(topic, p));
                    emit("offset " + p + " " + spec.getKey() + " " + info.offset() + " " + info.timestamp());
                }
            }
        }
    }
}
