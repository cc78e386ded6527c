//! Tests of the records' codec: Kafka's captures, every version, unknown types and tags.

use super::*;
use crate::testing::hex;

/// `decode_member` reads a member's fields in straight-line code: the order and the
/// version ranges it assumes are [`MEMBER_METADATA`]'s.
#[test]
fn member_layout_is_the_tables() {
    use MemberField::*;
    let order: Vec<MemberField> = MEMBER_METADATA.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        order,
        [
            MemberId,
            GroupInstanceId,
            ClientId,
            ClientHost,
            RebalanceTimeout,
            SessionTimeout,
            Subscription,
            Assignment
        ]
    );
    for version in 0..=GROUP_METADATA_VALUE_MAX {
        let layout = MemberLayout::of(version);
        let present: Vec<MemberField> = fields(&MEMBER_METADATA, version).collect();
        let expected: Vec<MemberField> = order
            .iter()
            .copied()
            .filter(|f| match f {
                GroupInstanceId => layout.group_instance_id,
                RebalanceTimeout => layout.rebalance_timeout,
                _ => true,
            })
            .collect();
        assert_eq!(present, expected, "version {version}");
        assert_eq!(layout.group_instance_id, version >= 3);
        assert_eq!(layout.rebalance_timeout, version >= 1);
    }
}

const GROUP: &str = "kafkesc-devcluster-group-id";

/// Real captures of `__consumer_offsets` records (konsumer_offsets' test fixtures).
#[test]
fn offset_commit_capture() {
    let key = decode_key(
        &hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000"),
        0,
    )
    .unwrap();
    assert_eq!(
        key,
        Key::OffsetCommit(OffsetCommitKey {
            group: GROUP.into(),
            topic: "t01".into(),
            partition: 0,
            record_type: 1
        })
    );
    let value = decode_value(
        &key,
        Some(&hex("0003000000000000006affffffff00000000018579eff58c")),
        0,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        value,
        Value::OffsetCommit(OffsetCommitValue {
            topic_id: None,
            unknown_tagged_fields: Default::default(),
            offset: 106,
            metadata: String::new(),
            commit_timestamp: 1_672_788_047_244,
            leader_epoch: -1,
            expire_timestamp: -1,
            version: 3
        })
    );
    assert_eq!(
        encode_value(&value).unwrap(),
        hex("0003000000000000006affffffff00000000018579eff58c")
    );
    assert_eq!(
        encode_key(&key).unwrap(),
        hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000")
    );
    assert_eq!(decode_value(&key, None, 0).unwrap(), None, "tombstone");
}

#[test]
fn group_metadata_capture() {
    let value_hex = "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
        2d39663466633162302d316437642d343437312d393065382d65306636346633\
        6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
        3162302d316437642d343437312d393065382d653066363466336339643966ff\
        ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
        000013000100000001000374303100000000000000000000001f000000000001\
        00037430310000000300000000000000010000000200000000";
    let key = decode_key(
        &hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964"),
        0,
    )
    .unwrap();
    assert_eq!(
        key,
        Key::GroupMetadata(GroupMetadataKey {
            group: GROUP.into()
        })
    );
    let Some(Value::GroupMetadata(v)) = decode_value(&key, Some(&hex(value_hex)), 0).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        (
            v.protocol_type.as_str(),
            v.generation,
            v.protocol.as_deref(),
            v.current_state_timestamp
        ),
        ("consumer", 7, Some("range"), 1_672_870_956_437)
    );
    let m = &v.members[0];
    assert_eq!(Some(m.member_id.as_str()), v.leader.as_deref());
    assert_eq!(
        (
            m.group_instance_id.as_deref(),
            m.client_id.as_str(),
            m.client_host.as_str()
        ),
        (None, "rdkafka", "/172.18.0.1")
    );
    assert_eq!((m.rebalance_timeout, m.session_timeout), (300_000, 45_000));
    let sub = decode_subscription(&m.subscription, 0).unwrap();
    assert_eq!(
        (sub.version, sub.topics.clone(), sub.owned_partitions.len()),
        (1, vec!["t01".to_owned()], 0)
    );
    let asg = decode_assignment(&m.assignment, 0).unwrap();
    assert_eq!(
        asg.assigned_partitions,
        vec![("t01".to_owned(), vec![0, 1, 2])]
    );
    assert_eq!(
        encode_value(&Value::GroupMetadata(v.clone())).unwrap(),
        hex(value_hex)
    );
    assert_eq!(encode_subscription(&sub).unwrap(), m.subscription);
    assert_eq!(encode_assignment(&asg).unwrap(), m.assignment);
}

/// Older versions (Burrow's hand-made test values) and constructed v1 and v4 values.
#[test]
fn older_and_flexible_versions() {
    let key = Key::OffsetCommit(OffsetCommitKey {
        group: "g".into(),
        topic: "t".into(),
        partition: 0,
        record_type: 1,
    });
    for (hex_value, expected) in [
        (
            "0000 00000000000020b4 0008 7465737464617461 0000000000000665",
            OffsetCommitValue {
                topic_id: None,
                unknown_tagged_fields: Default::default(),
                offset: 8372,
                metadata: "testdata".into(),
                commit_timestamp: 1637,
                leader_epoch: -1,
                expire_timestamp: -1,
                version: 0,
            },
        ),
        (
            "0001 0000000000000064 0008 6d65746164617461 00000000000004d2 ffffffffffffffff",
            OffsetCommitValue {
                topic_id: None,
                unknown_tagged_fields: Default::default(),
                offset: 100,
                metadata: "metadata".into(),
                commit_timestamp: 1234,
                leader_epoch: -1,
                expire_timestamp: -1,
                version: 1,
            },
        ),
        (
            "0004 0000000000000064 0000000a 09 6d65746164617461 00000000000004d2 00",
            OffsetCommitValue {
                topic_id: None,
                unknown_tagged_fields: Default::default(),
                offset: 100,
                metadata: "metadata".into(),
                commit_timestamp: 1234,
                leader_epoch: 10,
                expire_timestamp: -1,
                version: 4,
            },
        ),
    ] {
        let value = Value::OffsetCommit(expected);
        assert_eq!(
            decode_value(&key, Some(&hex(hex_value)), 0).unwrap(),
            Some(value.clone())
        );
        assert_eq!(encode_value(&value).unwrap(), hex(hex_value));
    }
    let gkey = Key::GroupMetadata(GroupMetadataKey { group: "g".into() });
    let v1 = hex(
        "00010008636f6e73756d657200000001000c7465737470726f746f636f6c000a\
         746573746c656164657200000001000c746573746d656d6265726964000c7465\
         7374636c69656e746964000e74657374636c69656e74686f7374000000040000\
         0008000000000000001a0000000000010006746f70696331000000010000000b\
         00000000",
    );
    let Some(Value::GroupMetadata(g)) = decode_value(&gkey, Some(&v1), 0).unwrap() else {
        panic!()
    };
    assert_eq!(
        (
            g.version,
            g.generation,
            g.members[0].rebalance_timeout,
            g.members[0].session_timeout
        ),
        (1, 1, 4, 8)
    );
    assert_eq!(
        decode_assignment(&g.members[0].assignment, 0)
            .unwrap()
            .assigned_partitions,
        vec![("topic1".to_owned(), vec![11])]
    );
    assert_eq!(encode_value(&Value::GroupMetadata(g)).unwrap(), v1);
}

#[test]
fn every_version_round_trips() {
    let member = MemberMetadata {
        unknown_tagged_fields: Default::default(),
        member_id: "m-1".into(),
        group_instance_id: Some("i-1".into()),
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        rebalance_timeout: 300_000,
        session_timeout: 45_000,
        subscription: vec![0, 1, 2],
        assignment: vec![],
    };
    for version in 0..=4 {
        let mut m = member.clone();
        if version < 3 {
            m.group_instance_id = None;
        }
        if version == 0 {
            m.rebalance_timeout = m.session_timeout;
        }
        let g = Value::GroupMetadata(GroupMetadataValue {
            unknown_tagged_fields: Default::default(),
            protocol_type: "consumer".into(),
            generation: 3,
            protocol: Some("range".into()),
            leader: None,
            current_state_timestamp: if version >= 2 { 77 } else { -1 },
            members: vec![m],
            version,
        });
        let key = Key::GroupMetadata(GroupMetadataKey { group: "g".into() });
        assert_eq!(
            decode_value(&key, Some(&encode_value(&g).unwrap()), 0).unwrap(),
            Some(g)
        );
        let o = Value::OffsetCommit(OffsetCommitValue {
            topic_id: None,
            unknown_tagged_fields: Default::default(),
            offset: 5,
            metadata: "m".into(),
            commit_timestamp: 9,
            leader_epoch: if version >= 3 { 2 } else { -1 },
            expire_timestamp: if version == 1 { 99 } else { -1 },
            version,
        });
        let key = Key::OffsetCommit(OffsetCommitKey {
            group: "g".into(),
            topic: "t".into(),
            partition: 1,
            record_type: 1,
        });
        assert_eq!(
            decode_value(&key, Some(&encode_value(&o).unwrap()), 0).unwrap(),
            Some(o)
        );
    }
}

#[test]
fn consumer_group_records_decode() {
    // A constructed type 3 key "group", value v0 epoch 10.
    let key = decode_key(&hex("0003 0005 67726f7570"), 0).unwrap();
    assert_eq!(
        key,
        Key::ConsumerGroup(ConsumerGroupKey {
            record_type: 3,
            group_id: "group".into(),
            member_id: None,
            regular_expression: None
        })
    );
    let Some(Value::ConsumerGroup(v)) =
        decode_value(&key, Some(&hex("0000 0000000a 00")), 0).unwrap()
    else {
        panic!()
    };
    assert_eq!(v.schema, "ConsumerGroupMetadataValue");
    assert_eq!(
        encode_value(&Value::ConsumerGroup(v)).unwrap(),
        hex("0000 0000000a 00")
    );
    let member_key = hex("0005 0001 67 0002 6d31");
    let key = decode_key(&member_key, 0).unwrap();
    assert_eq!(
        key,
        Key::ConsumerGroup(ConsumerGroupKey {
            record_type: 5,
            group_id: "g".into(),
            member_id: Some("m1".into()),
            regular_expression: None
        })
    );
    assert_eq!(encode_key(&key).unwrap(), member_key);
    let regex_key = decode_key(&hex("0010 0001 67 0002 612a"), 0).unwrap();
    assert!(
        matches!(regex_key, Key::ConsumerGroup(ConsumerGroupKey { regular_expression: Some(ref r), .. }) if r == "a*")
    );
}

#[test]
fn unknown_types_and_versions_are_opaque() {
    let key = decode_key(&hex("0009 0005 67726f7570"), 0).unwrap();
    assert_eq!(
        key,
        Key::Opaque(OpaqueKey {
            record_type: 9,
            data: hex("000567726f7570")
        })
    );
    let value = decode_value(&key, Some(&hex("0000 0000000a 00")), 0).unwrap();
    assert_eq!(
        value,
        Some(Value::Opaque(OpaqueValue {
            record_type: 9,
            version: Some(0),
            data: hex("0000000a00")
        }))
    );
    for short in [hex(""), hex("07")] {
        let value = decode_value(&key, Some(&short), 0).unwrap().unwrap();
        assert_eq!(
            value,
            Value::Opaque(OpaqueValue {
                record_type: 9,
                version: None,
                data: short.clone()
            })
        );
        assert_eq!(encode_value(&value).unwrap(), short);
    }
    let okey = Key::OffsetCommit(OffsetCommitKey {
        group: "g".into(),
        topic: "t".into(),
        partition: 1,
        record_type: 1,
    });
    assert!(matches!(
        decode_value(&okey, Some(&hex("0009 01")), 0).unwrap(),
        Some(Value::Opaque(_))
    ));
    let short = decode_value(&okey, Some(&hex("00")), 0).unwrap_err();
    assert!(matches!(short, Error::Truncated { .. }), "{short}");
    assert!(encode_value(&Value::OffsetCommit(OffsetCommitValue {
        topic_id: None,
        unknown_tagged_fields: Default::default(),
        offset: 0,
        metadata: String::new(),
        commit_timestamp: 0,
        leader_epoch: -1,
        expire_timestamp: -1,
        version: 5
    }))
    .is_err());
}

#[test]
fn flexible_values_keep_unknown_tags_and_write_them_back() {
    // v4 OffsetCommitValue with two unknown tagged fields (tag 7: 2 bytes, tag 300: 0).
    let data = hex(
        "0004 0000000000000064 0000000a 09 6d65746164617461 00000000000004d2 02 07 02 abcd ac02 00",
    );
    let key = Key::OffsetCommit(OffsetCommitKey {
        group: "g".into(),
        topic: "t".into(),
        partition: 1,
        record_type: 1,
    });
    let Some(Value::OffsetCommit(v)) = decode_value(&key, Some(&data), 0).unwrap() else {
        panic!()
    };
    assert_eq!((v.offset, v.leader_epoch), (100, 10));
    assert_eq!(
        v.unknown_tagged_fields,
        vec![(7, hex("abcd")), (300, vec![])]
    );
    assert_eq!(encode_value(&Value::OffsetCommit(v.clone())).unwrap(), data);

    let mut out_of_order = v.clone();
    out_of_order.unknown_tagged_fields.reverse();
    let err = encode_value(&Value::OffsetCommit(out_of_order)).unwrap_err();
    assert!(err.to_string().contains("strictly increasing"), "{err}");
    let mut v3 = v;
    v3.version = 3;
    let err = encode_value(&Value::OffsetCommit(v3)).unwrap_err();
    assert!(matches!(err, Error::UnsupportedVersion(_)), "{err}");

    // v4 OffsetCommitValue with a topic id (tag 0, declared by Kafka 4.1) and tag 7.
    let data = hex(concat!(
        "0004 0000000000000064 0000000a 01 00000000000004d2",
        " 02 00 10 000102030405060708090a0b0c0d0e0f 07 02 abcd"
    ));
    let Some(Value::OffsetCommit(v)) = decode_value(&key, Some(&data), 0).unwrap() else {
        panic!()
    };
    let id: [u8; 16] = std::array::from_fn(|i| i as u8);
    assert_eq!(v.topic_id, Some(id));
    assert_eq!(v.unknown_tagged_fields, vec![(7, hex("abcd"))]);
    assert_eq!(encode_value(&Value::OffsetCommit(v.clone())).unwrap(), data);
    let mut v3 = v.clone();
    v3.version = 3;
    v3.unknown_tagged_fields.clear();
    let Some(Value::OffsetCommit(read)) = decode_value(
        &key,
        Some(&encode_value(&Value::OffsetCommit(v3)).unwrap()),
        0,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(
        read.topic_id, None,
        "version 3 has no topic id; it is left out"
    );
    // Kafka writes the topic id only when it is not the zero uuid, its default, and reads an
    // absent one as that: a zero id is left out, and reads as no id.
    let mut zero = v.clone();
    zero.topic_id = Some([0; 16]);
    zero.unknown_tagged_fields.clear();
    let written = encode_value(&Value::OffsetCommit(zero)).unwrap();
    assert_eq!(
        written,
        hex("0004 0000000000000064 0000000a 01 00000000000004d2 00")
    );
    let explicit = hex(concat!(
        "0004 0000000000000064 0000000a 01 00000000000004d2",
        " 01 00 10 00000000000000000000000000000000"
    ));
    let Some(Value::OffsetCommit(read)) = decode_value(&key, Some(&explicit), 0).unwrap() else {
        panic!()
    };
    assert_eq!(read.topic_id, None);
    assert_eq!(encode_value(&Value::OffsetCommit(read)).unwrap(), written);

    let short = hex("0004 0000000000000064 0000000a 01 00000000000004d2 01 00 0f 000102030405060708090a0b0c0d0e");
    let err = decode_value(&key, Some(&short), 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "corrupt input at byte 23: its topic id (tagged field 0) has 15 bytes, not 16"
    );

    // v4 GroupMetadataValue: tag 1 on the group, tag 0 on its one member.
    let data = hex(concat!(
        "0004 09 636f6e73756d6572 00000001 06 72616e6765 03 6d31 0000000000000005",
        " 02 03 6d31 00 02 63 02 68 00007530 00002710 01 01 01 00 00",
        " 01 01 03 010203"
    ));
    let key = Key::GroupMetadata(GroupMetadataKey { group: "g".into() });
    let Some(Value::GroupMetadata(g)) = decode_value(&key, Some(&data), 0).unwrap() else {
        panic!()
    };
    assert_eq!(g.unknown_tagged_fields, vec![(1, hex("010203"))]);
    assert_eq!(g.members[0].unknown_tagged_fields, vec![(0, vec![])]);
    assert_eq!(g.members[0].session_timeout, 10_000);
    assert_eq!(encode_value(&Value::GroupMetadata(g)).unwrap(), data);
}

#[test]
fn truncated_values_name_the_position() {
    let key = Key::OffsetCommit(OffsetCommitKey {
        group: "g".into(),
        topic: "t".into(),
        partition: 1,
        record_type: 1,
    });
    let data = hex("0003000000000000006affffffff00000000018579eff58c");
    for cut in 0..data.len() {
        let err = decode_value(&key, Some(&data[..cut]), 500).unwrap_err();
        assert!(err.position().is_some_and(|p| p >= 500));
    }
}
