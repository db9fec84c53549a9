//! A 5 MB photo from the platform's bytes to the model request, in-process: the capped
//! streaming copy into `inbox/` (64 KB chunks, as the HTTP body arrives), then at the
//! model call the inbox read + type sniff + base64 (`media::inline::attach`) and the
//! request's `data:` URL. The network hops (getFile, the download from the fake) are not
//! in it: they are the platform's time.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use switchboard::agent::provider::ChatMessage;
use switchboard::store::Role;

const PHOTO: usize = 5 * 1000 * 1000;
const CHUNK: usize = 64 * 1024;

fn photo() -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0];
    b.extend((0..PHOTO - 4).map(|i| (i % 251) as u8));
    b
}

fn media(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let inbox = ws.path().join("inbox");
    std::fs::create_dir_all(&inbox).unwrap();
    let bytes = photo();
    let mut group = c.benchmark_group("photo_5mb");
    group.throughput(Throughput::Bytes(PHOTO as u64));
    group.sample_size(20);
    group.bench_function("download_into_inbox", |b| {
        b.iter(|| {
            rt.block_on(async {
                let chunks: Vec<Result<&[u8], String>> = bytes.chunks(CHUNK).map(Ok).collect();
                let (file, _name) =
                    switchboard::media::names::create_unique(&inbox, "photo.jpg").unwrap();
                let mut file = tokio::fs::File::from_std(file);
                let n = switchboard_channels::media::copy_capped(
                    futures::stream::iter(chunks),
                    20 * 1024 * 1024,
                    &mut file,
                )
                .await
                .unwrap();
                black_box(n);
            });
            std::fs::remove_dir_all(&inbox).unwrap();
            std::fs::create_dir_all(&inbox).unwrap();
        })
    });
    std::fs::write(inbox.join("photo_1.jpg"), &bytes).unwrap();
    let message = ChatMessage {
        role: Role::User,
        content: "what is this?\n[photo received: inbox/photo_1.jpg (image/jpeg, 4.8 MB)]".into(),
        tool_calls: vec![],
        tool_call_id: None,
        tool_name: None,
        images: Vec::new(),
    };
    group.bench_function("inline_for_the_model_request", |b| {
        b.iter(|| {
            let msgs = rt.block_on(switchboard::agent::context::inline::attach(
                vec![message.clone()],
                ws.path(),
                3,
                true,
            ));
            let image = &msgs[0].images[0];
            // What the OpenAI wire writes for it.
            let url = format!("data:{};base64,{}", image.mime, image.base64);
            black_box(serde_json::to_vec(&serde_json::json!({"url": url})).unwrap());
        })
    });
    group.finish();
}

criterion_group!(benches, media);
criterion_main!(benches);
