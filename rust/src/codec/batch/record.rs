//! The records of a magic-2 batch, parsed lazily as they are iterated: keys, values and
//! headers borrowed from the log buffer or from the batch's decompressed records.

use std::borrow::Cow;

use crate::codec::primitives::Reader;
use crate::codec::record_batch::{in_decompressed, BatchInfo, Record};
use crate::error::{Error, Result};

/// A record borrowed from the log buffer (or from the decompressed records of its batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The headers as they lie in the record (already checked): see [`RecordRef::headers`].
    headers: &'a [u8],
    header_count: usize,
    headers_position: usize,
}

impl<'a> RecordRef<'a> {
    /// The record's headers, (name, value). A name that is not UTF-8 reads as Kafka reads it
    /// (`Utils.utf8`): invalid sequences become U+FFFD.
    pub fn headers(&self) -> Result<Vec<(Cow<'a, str>, Option<&'a [u8]>)>> {
        let mut out = Vec::with_capacity(self.header_count);
        read_headers(
            &mut Reader::new(self.headers, self.headers_position),
            self.header_count,
            |name, value| out.push((String::from_utf8_lossy(name), value)),
        )?;
        Ok(out)
    }

    pub fn to_owned(&self) -> Result<Record> {
        Ok(Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers()?
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.map(<[u8]>::to_vec)))
                .collect(),
        })
    }
}

/// The records of one batch, parsed as they are iterated; after the last, bytes left over
/// are an error.
pub enum Records<'a> {
    V2 {
        r: Reader<'a>,
        left: usize,
        count: usize,
        base_offset: i64,
        base_timestamp: i64,
        log_append_time: Option<i64>,
        /// For decompressed records, where their compressed stream starts in the input.
        decompressed_from: Option<usize>,
    },
    Legacy(std::slice::Iter<'a, Record>),
}

impl<'a> Records<'a> {
    pub(super) fn v2(info: &BatchInfo, r: Reader<'a>, decompressed_from: Option<usize>) -> Self {
        Records::V2 {
            r,
            left: info.record_count,
            count: info.record_count,
            base_offset: info.base_offset,
            base_timestamp: info.base_timestamp,
            log_append_time: info.log_append_time.then_some(info.max_timestamp),
            decompressed_from,
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RecordRef<'a>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Records::V2 {
                r,
                left,
                count,
                base_offset,
                base_timestamp,
                log_append_time,
                decompressed_from,
            } => {
                let decompressed_from = *decompressed_from;
                let relocate = move |error: Error| match decompressed_from {
                    Some(start) => in_decompressed(error, start),
                    None => error,
                };
                if *left == 0 {
                    if r.is_empty() {
                        return None;
                    }
                    let error = r.corrupt(format!(
                        "{} bytes after the last of {count} records",
                        r.remaining()
                    ));
                    r.rest();
                    return Some(Err(relocate(error)));
                }
                *left -= 1;
                let record = read_record(r, *base_offset, *base_timestamp, *log_append_time);
                if record.is_err() {
                    *left = 0;
                    r.rest();
                }
                Some(record.map_err(relocate))
            }
            Records::Legacy(records) => records.next().map(|r| {
                Ok(RecordRef {
                    offset: r.offset,
                    timestamp: r.timestamp,
                    key: r.key.as_deref(),
                    value: r.value.as_deref(),
                    headers: &[],
                    header_count: 0,
                    headers_position: 0,
                })
            }),
        }
    }
}

#[inline(always)]
fn read_record<'a>(
    r: &mut Reader<'a>,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
) -> Result<RecordRef<'a>> {
    let start = r.position();
    let length = r.varint()?;
    if length < 0 {
        return Err(Error::Corrupt {
            position: start,
            reason: format!("negative record length {length}"),
        });
    }
    let mut rec = r.sub(length as usize, "record")?;
    let _attributes = rec.i8()?;
    let timestamp_delta = rec.varlong()?;
    let offset_delta = rec.varint()?;
    let key = varint_bytes(&mut rec, "record key")?;
    let value = varint_bytes(&mut rec, "record value")?;
    let header_count = rec.varint()?;
    if header_count < 0 || header_count as usize > rec.remaining() / 2 {
        return Err(rec.corrupt(format!("invalid header count {header_count}")));
    }
    let headers_position = rec.position();
    let mut headers = rec.clone();
    read_headers(&mut rec, header_count as usize, |_, _| {})?;
    if !rec.is_empty() {
        return Err(rec.corrupt(format!(
            "record length {length} leaves {} bytes unread",
            rec.remaining()
        )));
    }
    Ok(RecordRef {
        offset: base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: log_append_time.unwrap_or_else(|| base_timestamp.wrapping_add(timestamp_delta)),
        key,
        value,
        headers: headers.rest(),
        header_count: header_count as usize,
        headers_position,
    })
}

fn read_headers<'a>(
    r: &mut Reader<'a>,
    count: usize,
    mut header: impl FnMut(&'a [u8], Option<&'a [u8]>),
) -> Result<()> {
    for _ in 0..count {
        let at = r.position();
        let name = varint_bytes(r, "header key")?.ok_or_else(|| Error::Corrupt {
            position: at,
            reason: "null header key".into(),
        })?;
        header(name, varint_bytes(r, "header value")?);
    }
    Ok(())
}

#[inline(always)]
fn varint_bytes<'a>(r: &mut Reader<'a>, what: &str) -> Result<Option<&'a [u8]>> {
    let at = r.position();
    match r.varint()? {
        -1 => Ok(None),
        n if n < 0 => Err(Error::Corrupt {
            position: at,
            reason: format!("negative {what} length {n}"),
        }),
        n => Ok(Some(r.take(n as usize, what)?)),
    }
}
