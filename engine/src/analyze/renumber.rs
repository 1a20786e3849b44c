//! A part's analysis moved to where a merge puts it: its frames numbered on after the parts
//! before it, and its flows numbered as the merged analysis numbers them. Every type that
//! holds a frame number or a flow number renumbers itself ([`Renumbering`]);
//! `tests::every_frame_number_moves_on` checks that none is missed.

/// How a part's numbers become the merged analysis's.
pub struct Renumbering {
    /// Frames of the parts before: added to every frame number.
    pub frames: u64,
    /// The merged number of each of the part's flows, by its own number (the same where
    /// missing): flow numbers are `u32`s, as the flow table gives them.
    pub flows: Vec<u32>,
}

impl Renumbering {
    pub fn frame(&self, frame: &mut u64) {
        *frame = frame.saturating_add(self.frames);
    }

    pub fn first_frame(&self, frame: &mut Option<u64>) {
        if let Some(f) = frame {
            self.frame(f);
        }
    }

    pub fn flow(&self, flow: &mut u32) {
        *flow = self.flows.get(*flow as usize).copied().unwrap_or(*flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::analyzer::Analyzer;
    use crate::analyze::config::Config;
    use crate::analyze::frame::FrameSummary;
    use crate::capture::Inputs;
    use crate::decode::Decoder;

    /// Every frame of a sample, summarised, numbered from `first`.
    fn summaries(name: &str, first: u64) -> Vec<FrameSummary> {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples").join(name);
        let (mut inputs, errors) = Inputs::open(&[path], false);
        assert!(errors.is_empty(), "{errors:?}");
        inputs.number_from(first);
        let decoder = Decoder::new(&[]);
        let mut out = Vec::new();
        while let Some(frame) = inputs.next_frame() {
            let packet = decoder.decode(&frame.record);
            let mut s = FrameSummary::of(frame.number, &packet);
            if let Some(roce) = s.roce_mut()
                && let Some(job) = roce.deferred_icrc
                && let Some((status, computed)) = job.compute(frame.record.data)
            {
                roce.settle_icrc(status, computed);
            }
            out.push(s);
        }
        out
    }

    fn analysed(frames: &[FrameSummary], upto: usize) -> Analyzer {
        let mut analyzer = Analyzer::new(Config::default());
        frames.iter().take(upto).for_each(|f| analyzer.observe(f));
        analyzer
    }

    fn saved(analyzer: &Analyzer) -> Vec<u8> {
        postcard::to_stdvec(analyzer).expect("encoded")
    }

    #[test]
    fn every_frame_number_moves_on() {
        const ON: u64 = 1 << 40;
        let samples = std::fs::read_dir(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples"))
            .expect("samples")
            .map(|e| e.expect("entry"))
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned());
        for name in samples {
            let (numbered, numbered_on) = (summaries(&name, 1), summaries(&name, 1 + ON));
            // at every tenth of the capture, unfinished (held frames, open windows), and at its end
            for upto in (1..=10).map(|t| numbered.len() * t / 10) {
                let mut moved = analysed(&numbered, upto);
                moved.renumber(&Renumbering { frames: ON, flows: Vec::new() });
                let expected = analysed(&numbered_on, upto);
                assert!(saved(&moved) == saved(&expected), "{name}, after {upto} frames");
            }
            let (mut moved, mut expected) = (analysed(&numbered, usize::MAX), analysed(&numbered_on, usize::MAX));
            moved.finish();
            expected.finish();
            moved.renumber(&Renumbering { frames: ON, flows: Vec::new() });
            assert!(saved(&moved) == saved(&expected), "{name}, finished");
        }
    }
}
