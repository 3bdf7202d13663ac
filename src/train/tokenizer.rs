//! Tokenizers: loading and saving `tokenizer.json` (any Hugging Face tokenizer), and the
//! project's own byte-level BPE, trained deterministically on a corpus for the small model.

use std::collections::HashSet;
use std::path::Path;

use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{
    AddedToken, NormalizerWrapper, PostProcessorWrapper, Tokenizer, TokenizerBuilder,
};

use super::TrainError;

/// The end-of-sequence token of the project's tokenizer (the same text as Qwen2's).
pub const EOS_TOKEN: &str = "<|endoftext|>";
/// The padding token of the project's tokenizer.
pub const PAD_TOKEN: &str = "<|pad|>";

/// The smallest vocabulary `train_bpe` accepts: the two special tokens and the 256 bytes.
pub const MIN_VOCAB: usize = 2 + 256;

/// Reads a `tokenizer.json`.
pub fn load(path: &Path) -> Result<Tokenizer, TrainError> {
    let text = std::fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
    text.parse::<Tokenizer>()
        .map_err(|e| TrainError::Tokenizer(format!("{}: {e}", path.display())))
}

/// Writes `tokenizer` as a `tokenizer.json`.
pub fn save(tokenizer: &Tokenizer, path: &Path) -> Result<(), TrainError> {
    let text = tokenizer
        .to_string(false)
        .map_err(|e| TrainError::Tokenizer(format!("{}: {e}", path.display())))?;
    std::fs::write(path, text).map_err(|e| TrainError::io(path, e))
}

/// Trains a byte-level BPE tokenizer on `corpus` with at most `vocab_size` tokens: ids 0 and 1
/// are [`EOS_TOKEN`] and [`PAD_TOKEN`], then the 256 byte symbols, then the merges, learned from
/// pairs seen at least twice. Every text encodes without unknown tokens and decodes back to
/// itself. The result depends only on the corpus and `vocab_size` (merge ties are broken by
/// token id, and every byte is in the initial alphabet).
pub fn train_bpe<I, S>(corpus: I, vocab_size: usize) -> Result<Tokenizer, TrainError>
where
    I: Iterator<Item = S> + Send,
    S: AsRef<str> + Send,
{
    if vocab_size < MIN_VOCAB {
        return Err(TrainError::Tokenizer(format!(
            "a vocabulary of {vocab_size} is below the {MIN_VOCAB} a byte-level BPE needs"
        )));
    }
    let specials = vec![
        AddedToken::from(EOS_TOKEN, true),
        AddedToken::from(PAD_TOKEN, true),
    ];
    let alphabet: HashSet<char> = ByteLevel::alphabet().into_iter().collect();
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size)
        .min_frequency(2)
        .show_progress(false)
        .special_tokens(specials)
        .initial_alphabet(alphabet)
        .build();
    let byte_level = ByteLevel::new(false, false, true);
    let mut builder = TokenizerBuilder::<
        BPE,
        NormalizerWrapper,
        ByteLevel,
        PostProcessorWrapper,
        ByteLevel,
    >::new()
    .with_model(BPE::default())
    .with_pre_tokenizer(Some(byte_level))
    .with_decoder(Some(byte_level))
    .build()
    .map_err(|e| TrainError::Tokenizer(format!("building the BPE tokenizer: {e}")))?;
    builder
        .train(&mut trainer, corpus)
        .map_err(|e| TrainError::Tokenizer(format!("training the BPE tokenizer: {e}")))?;
    Ok(Tokenizer::from(builder))
}

/// The id of `token`, or an error naming it.
pub fn token_id(tokenizer: &Tokenizer, token: &str) -> Result<u32, TrainError> {
    tokenizer
        .token_to_id(token)
        .ok_or_else(|| TrainError::Tokenizer(format!("no token `{token}` in the vocabulary")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORPUS: &[&str] = &[
        "def add(a, b):\n    return a + b\n",
        "def sub(a, b):\n    return a - b\n",
        "class Shelf:\n    def __init__(self):\n        self.items = []\n",
        "Fix the bug in `add`: it returns the wrong value for negative numbers.\n",
    ];

    fn trained() -> Tokenizer {
        train_bpe(CORPUS.iter().cycle().take(40), 400).unwrap()
    }

    // Special tokens take ids 0 and 1; merges make the vocabulary grow past the bytes.
    #[test]
    fn special_ids_and_merges() {
        let tok = trained();
        assert_eq!(token_id(&tok, EOS_TOKEN).unwrap(), 0);
        assert_eq!(token_id(&tok, PAD_TOKEN).unwrap(), 1);
        let vocab = tok.get_vocab_size(true);
        assert!(vocab > MIN_VOCAB && vocab <= 400, "vocab {vocab}");
        // A frequent word of the corpus encodes to fewer tokens than its bytes.
        let ids = tok
            .encode("    return a + b", false)
            .unwrap()
            .get_ids()
            .to_vec();
        assert!(ids.len() < "    return a + b".len(), "{ids:?}");
    }

    // Any text, including bytes never seen in training, decodes back to itself.
    #[test]
    fn round_trips_any_text() {
        let tok = trained();
        for text in [
            "def add(a, b):\n    return a + b\n",
            "ünïcödé ✓ 日本語 \t\r\n  trailing  ",
            "emoji 🦀 and <|endoftext|> inside",
            "",
        ] {
            let ids = tok.encode(text, false).unwrap().get_ids().to_vec();
            assert_eq!(tok.decode(&ids, false).unwrap(), text);
        }
    }

    // The same corpus gives the same tokenizer, byte for byte; saving and loading keeps it.
    #[test]
    fn deterministic_and_saveable() {
        let a = trained().to_string(false).unwrap();
        let b = trained().to_string(false).unwrap();
        assert_eq!(a, b);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        save(&trained(), &path).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.to_string(false).unwrap(), a);
    }

    // Too small a vocabulary and an unreadable file are errors, not panics.
    #[test]
    fn errors() {
        assert!(train_bpe(CORPUS.iter(), 100).is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, "{not json").unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json"), "{err}");
    }
}
